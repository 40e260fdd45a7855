#include "sar/io/hostlist.h"

#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

namespace sar {
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

struct Range {
  uint64_t lo = 0, hi = 0;
  size_t width = 0;  // zero padding: the digits of the lower bound as written
};

// One bracket group: its ranges, and the literal text that follows it up to the next group.
struct Group {
  std::vector<Range> ranges;
  std::string_view tail;
};

// Expands one item ("pre[1-2,5]mid[01-03]post") as an odometer over its groups, the last group
// turning fastest (SLURM's order). *budget is what may still be added; the count is checked
// before any name is made. With `out` null only the count is taken.
Status ExpandItem(std::string_view item, std::string_view whole, size_t* budget,
                  std::vector<std::string>* out) {
  auto bad = [&](const std::string& why) {
    // Quote at most 64 bytes of the input: a hostile list may be megabytes long.
    std::string shown(whole.substr(0, 64));
    if (whole.size() > 64) shown += "...";
    return Status::InvalidArgument("host list '" + shown + "': " + why);
  };
  const size_t first = item.find('[');
  const std::string_view prefix = item.substr(0, first);
  std::vector<Group> groups;
  uint64_t count = 1;
  size_t pos = first;
  while (pos != std::string_view::npos) {
    const size_t close = item.find(']', pos);
    if (close == std::string_view::npos) return bad("unbalanced '['");
    Group g;
    std::vector<std::string_view> parts;
    SplitTopLevel(item.substr(pos + 1, close - pos - 1), &parts);
    uint64_t group_count = 0;
    for (std::string_view r : parts) {
      const size_t dash = r.find('-');
      const std::string_view lo_s = r.substr(0, dash);
      const std::string_view hi_s = dash == std::string_view::npos ? lo_s : r.substr(dash + 1);
      Range range;
      range.width = lo_s.size();
      if (!ParseNumber(lo_s, &range.lo) || !ParseNumber(hi_s, &range.hi) || range.hi < range.lo) {
        return bad("bad range '" + std::string(r.substr(0, 32)) + "'");
      }
      group_count += range.hi - range.lo + 1;  // each term < 10^18: no overflow before the check
      if (group_count > *budget) break;
      g.ranges.push_back(range);
    }
    if (group_count > *budget || count > *budget / group_count) {
      return bad("names more than " + std::to_string(*budget) + " hosts");
    }
    count *= group_count;
    pos = item.find('[', close + 1);
    g.tail = item.substr(close + 1, pos == std::string_view::npos ? pos : pos - close - 1);
    groups.push_back(std::move(g));
  }
  if (count > *budget) return bad("names more than " + std::to_string(*budget) + " hosts");
  *budget -= count;
  if (out == nullptr) return Status::OK();
  if (groups.empty()) {
    out->emplace_back(item);
    return Status::OK();
  }
  // Odometer: per group the range index and the value within it.
  std::vector<size_t> range_at(groups.size(), 0);
  std::vector<uint64_t> value(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) value[i] = groups[i].ranges[0].lo;
  for (uint64_t n = 0; n < count; ++n) {
    std::string name(prefix);
    for (size_t i = 0; i < groups.size(); ++i) {
      name += Padded(value[i], groups[i].ranges[range_at[i]].width);
      name += groups[i].tail;
    }
    out->push_back(std::move(name));
    for (size_t i = groups.size(); i-- > 0;) {  // advance, last group fastest
      const std::vector<Range>& rs = groups[i].ranges;
      if (value[i] < rs[range_at[i]].hi) {
        ++value[i];
        break;
      }
      if (range_at[i] + 1 < rs.size()) {
        value[i] = rs[++range_at[i]].lo;
        break;
      }
      range_at[i] = 0;
      value[i] = rs[0].lo;
    }
  }
  return Status::OK();
}

// Expands `expr` into *out, or, with `out` null, only counts; *budget is what may still be named.
Status Walk(std::string_view expr, std::vector<std::string>* out, size_t* budget) {
  std::vector<std::string_view> items;
  if (!SplitTopLevel(expr, &items)) {
    std::string shown(expr.substr(0, 64));
    if (expr.size() > 64) shown += "...";
    return Status::InvalidArgument("host list '" + shown + "': unbalanced brackets");
  }
  for (std::string_view item : items) {
    if (item.empty()) continue;
    SAR_RETURN_IF_ERROR(ExpandItem(item, expr, budget, out));
  }
  return Status::OK();
}

}  // namespace

Status ExpandHostlist(std::string_view expr, std::vector<std::string>* out, size_t max_hosts) {
  size_t budget = max_hosts;
  return Walk(expr, out, &budget);
}

Status CountHostlist(std::string_view expr, size_t* count, size_t max_hosts) {
  size_t budget = max_hosts;
  *count = 0;
  SAR_RETURN_IF_ERROR(Walk(expr, nullptr, &budget));
  *count = max_hosts - budget;
  return Status::OK();
}

}  // namespace sar
