#include "sar/io/admin_comment.h"

namespace sar {

JobPattern PatternFromAdminComment(std::string_view admin_comment) {
  constexpr std::string_view kKey = "sar-pattern=";
  constexpr std::string_view kSeparators = ", \t\r\n";
  size_t pos = 0;
  while (pos < admin_comment.size()) {
    const size_t start = admin_comment.find_first_not_of(kSeparators, pos);
    if (start == std::string_view::npos) break;
    size_t end = admin_comment.find_first_of(kSeparators, start);
    if (end == std::string_view::npos) end = admin_comment.size();
    const std::string_view word = admin_comment.substr(start, end - start);
    if (word.substr(0, kKey.size()) == kKey) {
      JobPattern pattern = JobPattern::kDefault;
      return ParseJobPattern(word.substr(kKey.size()), &pattern) ? pattern : JobPattern::kDefault;
    }
    pos = end;
  }
  return JobPattern::kDefault;
}

}  // namespace sar
