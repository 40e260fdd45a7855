// Virtual layer (service level) per route. Text, one route per line:
//   # comment
//   default <layer>
//   0x<src lid> 0x<dst lid> <layer>
// See docs/formats.md.
#pragma once

#include <string>
#include <string_view>

#include "sar/lft.h"
#include "sar/status.h"

namespace sar {

Status ParseVirtualLayers(std::string_view text, const std::string& source, VirtualLayers* out);
Status ReadVirtualLayers(const std::string& path, VirtualLayers* out);
std::string FormatVirtualLayers(const VirtualLayers& layers);

}  // namespace sar
