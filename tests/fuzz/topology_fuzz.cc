// Fuzzes the topology reader. Whatever it accepts must survive a write/read round trip in both
// styles: that is what ibsim and OpenSM will be fed.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/test_util.h"
#include "sar/io/topology.h"

namespace {

// True if every port GUID is the one ibsim would derive from the node GUID; only then can the
// ibsim style (which has no syntax for port GUIDs) reproduce the fabric exactly.
bool DefaultPortGuids(const sar::Fabric& f) {
  for (sar::NodeId n = 0; n < f.num_nodes(); ++n) {
    if (f.is_switch(n)) {
      if (f.port_guid({n, 0}) != f.node_guid(n)) return false;
    } else {
      for (int p = 1; p <= f.num_ports(n); ++p) {
        if (f.port_guid({n, p}) != f.node_guid(n) + p) return false;
      }
    }
  }
  return true;
}

void RoundTrip(const sar::Fabric& f, sar::TopologyStyle style) {
  sar::TopologyWriteOptions opt;
  opt.style = style;
  sar::Fabric back;
  const sar::Status s = sar::ParseTopology(sar::FormatTopology(f, opt), "written", &back);
  if (style == sar::TopologyStyle::kIbsim && !DefaultPortGuids(f)) return;
  if (!s.ok()) std::abort();
  if (!sar::io::testing::DiffFabrics(f, back).empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sar::Fabric f;
  if (!sar::ParseTopology(text, "fuzz", &f).ok()) return 0;
  RoundTrip(f, sar::TopologyStyle::kIbnetdiscover);
  RoundTrip(f, sar::TopologyStyle::kIbsim);
  return 0;
}
