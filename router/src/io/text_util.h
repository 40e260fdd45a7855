// Line-oriented parsing helpers shared by the file readers in this directory (the line reader
// itself is public: sar/io/line_reader.h).
//
// Every reader walks its input line by line and reports the first problem as
// Status::Corruption("path:line: expected ..., found '...'"); these helpers keep that uniform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sar/io/line_reader.h"
#include "sar/status.h"

namespace sar::io {

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

/// "source:line: expected <expected>, found <Quote(found, echo)>".
Status ExpectedAt(const std::string& source, int line, const std::string& expected,
                  std::string_view found, Echo echo = Echo::kQuote);

}  // namespace sar::io
