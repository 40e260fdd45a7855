// Line-oriented parsing helpers shared by the file readers in this directory.
//
// Every reader walks its input line by line and reports the first problem as
// Status::Corruption("path:line: expected ..., found '...'"); these helpers keep that uniform.
#pragma once

#include <cstddef>
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

/// Whether an error message may show the bytes of the input it is about. kHide for a file the
/// reader may not repeat (FileInfo::may_quote() false: read with more rights than its readers).
enum class Echo { kQuote, kHide };
/// At most this many input bytes appear in a message.
inline constexpr size_t kQuoteMax = 40;

/// The one way input bytes get into a message: at most kQuoteMax bytes of `s`, in single quotes,
/// anything but printable ASCII escaped (\t, \xNN; '\'' and '\\' too), so a message stays one
/// short line of text whatever the input held; "..." marks a cut. With Echo::kHide it is a
/// placeholder that shows nothing of `s`.
std::string Quote(std::string_view s, Echo echo = Echo::kQuote);

/// "source:line: message".
Status CorruptionAt(const std::string& source, int line, const std::string& message);
/// "source:line: expected <expected>, found <Quote(found, echo)>".
Status ExpectedAt(const std::string& source, int line, const std::string& expected,
                  std::string_view found, Echo echo = Echo::kQuote);

}  // namespace sar::io
