// Line-oriented text reading, public so that readers outside libsar (the OpenSM plugin's config
// file) parse the way libsar's own file readers do: lines without '\n' (a trailing '\r' dropped),
// 1-based line numbers, '#' comments, whitespace-separated words, and errors as
// Status::Corruption("path:line: ...").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/status.h"

namespace sar::io {

/// Splits text into lines. A final line without '\n' is still a line.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : rest_(text) {}
  /// Sets *line to the next line; false at the end of the text.
  bool Next(std::string_view* line);
  int line_number() const { return line_number_; }

 private:
  std::string_view rest_;
  int line_number_ = 0;
  bool done_ = false;
};

inline bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
std::string_view Trim(std::string_view s);
/// Drops everything from the first '#' on.
std::string_view StripComment(std::string_view s);
/// Whitespace-separated words.
std::vector<std::string_view> SplitWords(std::string_view s);

/// "source:line: message".
Status CorruptionAt(const std::string& source, int line, const std::string& message);

}  // namespace sar::io
