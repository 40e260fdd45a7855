// Virtual layer (service level) per route. Text, one route per line:
//   # comment
//   default <layer>
//   0x<src lid> 0x<dst lid> <layer>
// See docs/formats.md.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

/// The largest layers text written or read: 1 GiB is ~67 million routes (16 bytes a line), all
/// pairs of ~8,000 endpoint LIDs. Beyond that the text is no use to anyone (the reader's
/// duplicate check alone would need several GB), and an LMC 7 fabric would need ~34 GB
/// (issue 19 defect 22), so such layers are refused rather than written.
inline constexpr size_t kMaxLayersFileBytes = size_t{1} << 30;

Status ParseVirtualLayers(std::string_view text, const std::string& source, VirtualLayers* out);
/// Reads a layers file of at most `max_bytes`.
Status ReadVirtualLayers(const std::string& path, VirtualLayers* out,
                         size_t max_bytes = kMaxLayersFileBytes);
/// The size in bytes of the text FormatVirtualLayers makes, computed without making it.
size_t VirtualLayersTextSize(const VirtualLayers& layers);
/// Formats `layers` into *out, or, if the text would be longer than `max_bytes`, fails with
/// InvalidArgument naming the number of routes and the size, before allocating anything.
Status FormatVirtualLayers(const VirtualLayers& layers, std::string* out,
                           size_t max_bytes = kMaxLayersFileBytes);
/// FormatVirtualLayers, then WriteFileAtomic; if the size is refused, nothing is written and the
/// error is an IOError naming `path` and the size.
Status WriteVirtualLayers(const std::string& path, const VirtualLayers& layers,
                          size_t max_bytes = kMaxLayersFileBytes);

}  // namespace sar
