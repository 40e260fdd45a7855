// Line-oriented parsing helpers shared by the file readers in this directory.
//
// Every reader walks its input line by line and reports the first problem as
// Status::Corruption("path:line: expected ..., found '...'"); these helpers keep that uniform.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sar/status.h"

namespace sar::io {

/// Splits text into lines (without '\n'; a trailing '\r' is dropped too). Line numbers are
/// 1-based. A final line without '\n' is still a line.
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

/// Parses a whole token as an unsigned number: "0x" or "0X" followed by hex digits, or decimal
/// digits. Fails on anything else, on an empty token and on overflow of uint64_t.
bool ParseUint(std::string_view token, uint64_t* out);
/// Hex digits only (no prefix), as in ibnetdiscover's "(2c90000200005)".
bool ParseHexDigits(std::string_view token, uint64_t* out);

/// A short, printable excerpt of `s` for error messages (long lines are cut).
std::string Excerpt(std::string_view s);

/// "source:line: message".
Status CorruptionAt(const std::string& source, int line, const std::string& message);
/// "source:line: expected <expected>, found '<excerpt of found>'".
Status ExpectedAt(const std::string& source, int line, const std::string& expected,
                  std::string_view found);

}  // namespace sar::io
