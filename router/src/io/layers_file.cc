#include "sar/io/layers_file.h"

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
          "route " + std::string(words[0]) + " -> " + std::string(words[1]) + " listed twice");
    }
    result.set(static_cast<Lid>(src), static_cast<Lid>(dst), static_cast<int>(layer));
  }
  *out = std::move(result);
  return Status::OK();
}

Status ReadVirtualLayers(const std::string& path, VirtualLayers* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseVirtualLayers(text, path, out);
}

std::string FormatVirtualLayers(const VirtualLayers& layers) {
  std::string out =
      "# <src lid> <dst lid> <layer>\ndefault " + std::to_string(layers.default_layer) + "\n";
  char buf[48];
  for (const VirtualLayers::Entry& e : layers.Entries()) {
    std::snprintf(buf, sizeof buf, "0x%04x 0x%04x %d\n", e.src, e.dst, e.layer);
    out += buf;
  }
  return out;
}

}  // namespace sar
