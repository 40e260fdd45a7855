// Setup for bench/eval_speed.py: routes a topology with one of libsar's engines and writes the
// tables as an LFT dump without the comment OpenSM's dump puts after each route line.
//
// Why not `sar-route route -o`: at 45k hosts the commented dump is ~190M lines, ~14 GB, which
// the writer builds in memory before writing it. Bare route lines ("0x<lid> <port>", which every
// LFT reader takes) make it ~2 GB, written as they are formatted.
//
//   eval_tables TOPOLOGY GUID2LID ENGINE OUT
#include <cstdio>
#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/io/guid2lid.h"
#include "sar/io/topology.h"
#include "sar/model/fabric.h"

namespace {

sar::Status Run(const std::string& topology, const std::string& guid2lid,
                const std::string& engine_name, const std::string& out_path) {
  sar::Fabric f;
  SAR_RETURN_IF_ERROR(sar::ReadTopology(topology, &f));
  std::vector<sar::Guid2LidEntry> entries;
  SAR_RETURN_IF_ERROR(sar::ReadGuid2Lid(guid2lid, &entries));
  f.ClearLids();
  int skipped = 0;
  SAR_RETURN_IF_ERROR(sar::ApplyGuid2Lid(entries, &f, &skipped));
  const auto engine = sar::MakeRoutingEngine(engine_name);
  if (!engine) return sar::Status::InvalidArgument("no engine '" + engine_name + "'");
  sar::RoutingInput in;
  in.fabric = &f;
  sar::RoutingOutput out;
  SAR_RETURN_IF_ERROR(engine->Route(in, &out));

  const std::string tmp = out_path + ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "w");
  if (file == nullptr) return sar::Status::IOError("cannot write " + tmp);
  static char buffer[1 << 20];
  std::setvbuf(file, buffer, _IOFBF, sizeof buffer);
  const sar::Lid max_lid = out.lfts.max_lid();
  for (sar::NodeId sw : f.switches()) {
    const int s = f.switch_index(sw);
    std::fprintf(file, "Unicast lids [0-%u] of switch Lid %u guid 0x%016llx ('%s'):\n", max_lid,
                 f.switch_lid(sw), static_cast<unsigned long long>(f.node_guid(sw)),
                 f.description(sw).c_str());
    const uint8_t* row = out.lfts.row(s);
    for (sar::Lid lid = 1; lid <= max_lid; ++lid) {
      if (row[lid] != sar::LftSet::kNoRoute) std::fprintf(file, "0x%04x %03u\n", lid, row[lid]);
    }
    std::fprintf(file, "%u lids dumped\n", max_lid);
  }
  if (std::fclose(file) != 0 || std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    return sar::Status::IOError("cannot write " + out_path);
  }
  return sar::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s TOPOLOGY GUID2LID ENGINE OUT\n", argv[0]);
    return 2;
  }
  const sar::Status s = Run(argv[1], argv[2], argv[3], argv[4]);
  if (!s.ok()) {
    std::fprintf(stderr, "eval_tables: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
