#include "io/text_util.h"

namespace sar::io {

bool LineReader::Next(std::string_view* line) {
  if (done_) return false;
  if (rest_.empty()) {
    done_ = true;
    return false;
  }
  const size_t nl = rest_.find('\n');
  std::string_view l = rest_.substr(0, nl);
  if (nl == std::string_view::npos) {
    rest_ = {};
    done_ = true;
  } else {
    rest_.remove_prefix(nl + 1);
  }
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  ++line_number_;
  *line = l;
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view StripComment(std::string_view s) { return s.substr(0, s.find('#')); }

std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    const size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool ParseHexDigits(std::string_view token, uint64_t* out) {
  if (token.empty()) return false;
  uint64_t v = 0;
  for (char c : token) {
    const int d = HexValue(c);
    if (d < 0 || v > (UINT64_MAX >> 4)) return false;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

bool ParseUint(std::string_view token, uint64_t* out) {
  if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
    return ParseHexDigits(token.substr(2), out);
  }
  if (token.empty()) return false;
  uint64_t v = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

std::string Quote(std::string_view s, Echo echo) {
  if (echo == Echo::kHide) return "(content not shown: the file is not world-readable)";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (char c : s.substr(0, kQuoteMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u == '\\' || u == '\'') {
      out += '\\';
      out += c;
    } else if (u == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  if (s.size() > kQuoteMax) out += "...";
  out += '\'';
  return out;
}

Status CorruptionAt(const std::string& source, int line, const std::string& message) {
  return Status::Corruption(source + ":" + std::to_string(line) + ": " + message);
}

Status ExpectedAt(const std::string& source, int line, const std::string& expected,
                  std::string_view found, Echo echo) {
  return CorruptionAt(source, line, "expected " + expected + ", found " + Quote(found, echo));
}

}  // namespace sar::io
