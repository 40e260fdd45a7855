// Fuzzes the guid2lid reader and ApplyGuid2Lid on a fixed fabric. LIDs that apply cleanly must
// come back unchanged through FormatGuid2Lid.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "io/test_util.h"
#include "sar/io/guid2lid.h"
#include "sar/io/topology.h"

namespace {
const sar::Fabric& TheFabric() {
  static const sar::Fabric* fabric = [] {
    auto* f = new sar::Fabric;
    if (!sar::ReadTopology(sar::io::testing::TestDataPath("small.topo"), f).ok()) std::abort();
    return f;
  }();
  return *fabric;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<sar::Guid2LidEntry> entries;
  if (!sar::ParseGuid2Lid(text, "fuzz", &entries).ok()) return 0;
  sar::Fabric f = TheFabric();
  const sar::Fabric before = f;
  if (!sar::ApplyGuid2Lid(entries, &f).ok()) {
    if (!sar::io::testing::DiffFabrics(f, before).empty()) std::abort();  // must be untouched
    return 0;
  }
  std::vector<sar::Guid2LidEntry> again;
  if (!sar::ParseGuid2Lid(sar::FormatGuid2Lid(f), "written", &again).ok()) std::abort();
  sar::Fabric g = TheFabric();
  if (!sar::ApplyGuid2Lid(again, &g).ok()) std::abort();
  if (!sar::io::testing::DiffFabrics(f, g).empty()) std::abort();
  return 0;
}
