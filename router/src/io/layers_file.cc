#include "sar/io/layers_file.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

namespace {
constexpr uint64_t kMaxLayer = 15;  // InfiniBand has 16 service levels
}  // namespace

Status ParseVirtualLayers(std::string_view text, const std::string& source, VirtualLayers* out) {
  VirtualLayers result;
  bool have_default = false;
  std::set<std::pair<Lid, Lid>> seen;
  io::LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const int n = lines.line_number();
    const std::vector<std::string_view> words = io::SplitWords(io::StripComment(line));
    if (words.empty()) continue;
    uint64_t layer = 0;
    if (words[0] == "default") {
      if (words.size() != 2 || !io::ParseUint(words[1], &layer) || layer > kMaxLayer) {
        return io::ExpectedAt(source, n, "'default <layer 0..15>'", io::Trim(line));
      }
      if (have_default) return io::CorruptionAt(source, n, "second 'default' line");
      have_default = true;
      result.default_layer = static_cast<int>(layer);
      continue;
    }
    uint64_t src = 0, dst = 0;
    if (words.size() != 3 || !io::ParseUint(words[0], &src) || !io::ParseUint(words[1], &dst) ||
        !io::ParseUint(words[2], &layer)) {
      return io::ExpectedAt(source, n, "'0x<src lid> 0x<dst lid> <layer>' or 'default <layer>'",
                            io::Trim(line));
    }
    if (src == 0 || src > kMaxUnicastLid || dst == 0 || dst > kMaxUnicastLid) {
      return io::ExpectedAt(source, n, "unicast LIDs 0x1..0xbfff", io::Trim(line));
    }
    if (layer > kMaxLayer) return io::ExpectedAt(source, n, "a layer 0..15", words[2]);
    if (!seen.emplace(static_cast<Lid>(src), static_cast<Lid>(dst)).second) {
      return io::CorruptionAt(
          source, n,
          "route " + io::Quote(words[0]) + " -> " + io::Quote(words[1]) + " listed twice");
    }
    result.set(static_cast<Lid>(src), static_cast<Lid>(dst), static_cast<int>(layer));
  }
  *out = std::move(result);
  return Status::OK();
}

Status ReadVirtualLayers(const std::string& path, VirtualLayers* out, size_t max_bytes) {
  std::string text;
  ReadOptions options;
  options.max_bytes = max_bytes;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, options, &text));
  return ParseVirtualLayers(text, path, out);
}

namespace {

const char kHeader[] = "# <src lid> <dst lid> <layer>\ndefault ";

// "0x%04x": at least four hex digits.
size_t LidChars(Lid lid) {
  size_t digits = 1;
  while (lid >>= 4) ++digits;
  return 2 + std::max<size_t>(digits, 4);
}

size_t LayerChars(int layer) { return std::to_string(layer).size(); }

size_t HeaderSize(const VirtualLayers& layers) {
  return sizeof kHeader - 1 + LayerChars(layers.default_layer) + 1;
}

}  // namespace

size_t VirtualLayersTextSize(const VirtualLayers& layers) {
  size_t total = HeaderSize(layers);
  layers.ForEachEntry([&](const VirtualLayers::Entry& e) {
    total += LidChars(e.src) + 1 + LidChars(e.dst) + 1 + LayerChars(e.layer) + 1;
  });
  return total;
}

Status FormatVirtualLayers(const VirtualLayers& layers, std::string* out, size_t max_bytes) {
  out->clear();
  // Cheap bound first (unicast LIDs print in 6 characters, layers 0..15 in 1 or 2), the exact
  // count (one pass, nothing allocated) only if the bound is over the limit.
  constexpr size_t kMaxLine = 6 + 1 + 6 + 1 + 2 + 1;
  const size_t bound = HeaderSize(layers) + layers.size() * kMaxLine;
  const size_t size = bound <= max_bytes ? bound : VirtualLayersTextSize(layers);
  if (size > max_bytes) {
    return Status::InvalidArgument(
        "virtual layers of " + std::to_string(layers.size()) + " routes would be " +
        std::to_string(size) + " bytes of text (" + std::to_string(size >> 20) +
        " MiB), more than the limit of " + std::to_string(max_bytes) +
        " bytes; not written (a fabric this large, e.g. with a high LMC, has too many routes "
        "to list)");
  }
  std::string text;
  text.reserve(size);
  text += kHeader;
  text += std::to_string(layers.default_layer);
  text += '\n';
  char buf[48];
  layers.ForEachEntry([&](const VirtualLayers::Entry& e) {
    const int n = std::snprintf(buf, sizeof buf, "0x%04x 0x%04x %d\n", e.src, e.dst, e.layer);
    text.append(buf, static_cast<size_t>(n));
  });
  *out = std::move(text);
  return Status::OK();
}

Status WriteVirtualLayers(const std::string& path, const VirtualLayers& layers, size_t max_bytes) {
  std::string text;
  const Status s = FormatVirtualLayers(layers, &text, max_bytes);
  // An IOError like any other failed write (sar-route's exit code for it), naming the file.
  if (!s.ok()) return Status::IOError("cannot write '" + path + "': " + s.message());
  return WriteFileAtomic(path, text);
}

}  // namespace sar
