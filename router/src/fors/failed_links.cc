// The failed-links file and the quantities the schedule derives from it.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "sar/fors/fors.h"
#include "sar/io/file_util.h"

namespace sar {

Status ParseFailedLinks(std::string_view text, const std::string& source, int m0, int m1,
                        std::vector<FailedLink>* out) {
  out->clear();
  std::vector<uint8_t> seen(static_cast<size_t>(m0) * m1, 0);
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    const char* p = line.c_str();
    char* q = nullptr;
    auto skip_space = [&] {
      while (*p == ' ' || *p == '\t' || *p == '\r') ++p;
    };
    skip_space();
    if (*p == '\0') continue;
    long values[2];
    for (long& v : values) {
      skip_space();
      if (*p < '0' || *p > '9') {
        return Status::Corruption(where + "expected '<leaf> <spine>' (0-based integers), got '" +
                                  line + "'");
      }
      v = std::strtol(p, &q, 10);
      p = q;
    }
    skip_space();
    if (*p != '\0') {
      return Status::Corruption(where + "trailing text after '<leaf> <spine>': '" + line + "'");
    }
    if (values[0] >= m1 || values[1] >= m0) {
      return Status::Corruption(where + "link " + std::to_string(values[0]) + " " +
                                std::to_string(values[1]) + " out of range (leaves 0.." +
                                std::to_string(m1 - 1) + ", spines 0.." + std::to_string(m0 - 1) +
                                ")");
    }
    const FailedLink link{static_cast<int>(values[0]), static_cast<int>(values[1])};
    uint8_t& s = seen[static_cast<size_t>(link.leaf) * m0 + link.spine];
    if (s)
      return Status::Corruption(where + "duplicate failed link " + std::to_string(link.leaf) + " " +
                                std::to_string(link.spine));
    s = 1;
    out->push_back(link);
  }
  return Status::OK();
}

Status ReadFailedLinks(const std::string& path, int m0, int m1, std::vector<FailedLink>* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseFailedLinks(text, path, m0, m1, out);
}

std::vector<uint8_t> FailedMask(int m0, int m1, const std::vector<FailedLink>& links) {
  std::vector<uint8_t> mask(static_cast<size_t>(m0) * m1, 0);
  for (const FailedLink& l : links) mask[static_cast<size_t>(l.leaf) * m0 + l.spine] = 1;
  return mask;
}

int BandwidthReduction(int m0, int m1, const std::vector<FailedLink>& links) {
  const std::vector<uint8_t> mask = FailedMask(m0, m1, links);
  int f = 0;
  for (int leaf = 0; leaf < m1; ++leaf) {
    f = std::max(f, static_cast<int>(
                        std::count(mask.begin() + leaf * m0, mask.begin() + (leaf + 1) * m0, 1)));
  }
  return f;
}

int64_t InterLeafPhases(int m0, int m1, int f) {
  const int64_t p = static_cast<int64_t>(m0) * m1;
  const int64_t num = m0 * (p - m0);
  return (num + (m0 - f) - 1) / (m0 - f);
}

}  // namespace sar
