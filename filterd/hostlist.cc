#include "hostlist.h"

#include <charconv>
#include <cstdint>

namespace sar::filterd {
namespace {

// Splits at commas that are not inside brackets.
bool SplitTopLevel(std::string_view s, std::vector<std::string_view>* parts) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') {
      if (++depth > 1) return false;
    } else if (s[i] == ']') {
      if (--depth < 0) return false;
    } else if (s[i] == ',' && depth == 0) {
      parts->push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return false;
  parts->push_back(s.substr(start));
  return true;
}

bool ParseNumber(std::string_view s, uint64_t* v) {
  if (s.empty() || s.size() > 18) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string Padded(uint64_t v, size_t width) {
  std::string digits = std::to_string(v);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Expands one item that may hold several bracket groups, recursively from the first group.
Status ExpandItem(std::string_view item, std::string_view whole, std::vector<std::string>* out) {
  const size_t open = item.find('[');
  if (open == std::string_view::npos) {
    out->emplace_back(item);
    return Status::OK();
  }
  const size_t close = item.find(']', open);
  if (close == std::string_view::npos) {
    return Status::InvalidArgument("host list '" + std::string(whole) + "': unbalanced '['");
  }
  const std::string_view prefix = item.substr(0, open);
  const std::string_view rest = item.substr(close + 1);
  std::vector<std::string_view> ranges;
  SplitTopLevel(item.substr(open + 1, close - open - 1), &ranges);
  for (std::string_view r : ranges) {
    const size_t dash = r.find('-');
    const std::string_view lo_s = r.substr(0, dash);
    const std::string_view hi_s = dash == std::string_view::npos ? lo_s : r.substr(dash + 1);
    uint64_t lo = 0, hi = 0;
    if (!ParseNumber(lo_s, &lo) || !ParseNumber(hi_s, &hi) || hi < lo) {
      return Status::InvalidArgument("host list '" + std::string(whole) + "': bad range '" +
                                     std::string(r) + "'");
    }
    for (uint64_t v = lo; v <= hi; ++v) {
      std::string head = std::string(prefix) + Padded(v, lo_s.size());
      std::vector<std::string> tails;
      SAR_RETURN_IF_ERROR(ExpandItem(rest, whole, &tails));
      for (std::string& t : tails) out->push_back(head + t);
    }
  }
  return Status::OK();
}

}  // namespace

Status ExpandHostlist(std::string_view expr, std::vector<std::string>* out) {
  std::vector<std::string_view> items;
  if (!SplitTopLevel(expr, &items)) {
    return Status::InvalidArgument("host list '" + std::string(expr) + "': unbalanced brackets");
  }
  for (std::string_view item : items) {
    if (item.empty()) continue;
    SAR_RETURN_IF_ERROR(ExpandItem(item, expr, out));
  }
  return Status::OK();
}

}  // namespace sar::filterd
