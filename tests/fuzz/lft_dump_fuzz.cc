// Fuzzes the LFT dump reader against a fixed small fabric (the captured 3-switch sample with
// LMC 1). Accepted tables must come back unchanged through the writer.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/test_util.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"

namespace {
const sar::Fabric& TheFabric() {
  static const sar::Fabric* fabric = [] {
    auto* f = new sar::Fabric;
    if (!sar::ReadTopology(sar::io::testing::TestDataPath("small-lmc1.ibnetdiscover"), f).ok()) {
      std::abort();
    }
    return f;
  }();
  return *fabric;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const sar::Fabric& f = TheFabric();
  sar::LftSet lfts;
  sar::LftReadOptions opt;
  opt.ignore_unknown_switches = size > 0 && (data[0] & 1);
  if (!sar::ParseLftDump(text, "fuzz", f, &lfts, opt).ok()) return 0;
  sar::LftSet back;
  if (!sar::ParseLftDump(sar::FormatLftDump(f, lfts), "written", f, &back).ok()) std::abort();
  if (!(back == lfts)) std::abort();
  return 0;
}
