// Fuzzes the virtual layers reader; accepted layers must survive a write/read round trip.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sar/io/layers_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sar::VirtualLayers v;
  if (!sar::ParseVirtualLayers(text, "fuzz", &v).ok()) return 0;
  std::string written;
  if (!sar::FormatVirtualLayers(v, &written).ok()) std::abort();
  if (written.size() != sar::VirtualLayersTextSize(v)) std::abort();
  sar::VirtualLayers back;
  if (!sar::ParseVirtualLayers(written, "written", &back).ok()) std::abort();
  if (back.default_layer != v.default_layer || back.size() != v.size()) std::abort();
  const auto a = v.Entries(), b = back.Entries();
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].src != b[i].src || a[i].dst != b[i].dst || a[i].layer != b[i].layer) std::abort();
  }
  return 0;
}
