// Line-oriented parsing helpers shared by the file readers in this directory (the line reader
// itself is public: sar/io/line_reader.h).
//
// Every reader walks its input line by line and reports the first problem as
// Status::Corruption("path:line: expected ..., found '...'"); these helpers keep that uniform.
#pragma once

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

/// A short, printable excerpt of `s` for error messages (long lines are cut).
std::string Excerpt(std::string_view s);

/// "source:line: expected <expected>, found '<excerpt of found>'".
Status ExpectedAt(const std::string& source, int line, const std::string& expected,
                  std::string_view found);

}  // namespace sar::io
