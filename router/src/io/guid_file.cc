#include "sar/io/guid_file.h"

#include <string_view>
#include <utility>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

Status ReadGuidFile(const std::string& path, std::vector<Guid>* guids, size_t max_bytes) {
  std::string text;
  FileInfo info;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, UntrustedInputOptions(max_bytes), &text, &info));
  const io::Echo echo = info.may_quote() ? io::Echo::kQuote : io::Echo::kHide;
  std::vector<Guid> result;
  io::LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const std::vector<std::string_view> words = io::SplitWords(io::StripComment(line));
    if (words.empty()) continue;
    uint64_t guid = 0;
    // OpenSM's cn_guid_file takes "0x..." or bare hex; a bare token is always hex here too.
    std::string_view token = words[0];
    if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
      token.remove_prefix(2);
    }
    if (words.size() != 1 || !io::ParseHexDigits(token, &guid) || guid == 0) {
      return io::ExpectedAt(path, lines.line_number(), "one GUID (hex) per line", io::Trim(line),
                            echo);
    }
    result.push_back(guid);
  }
  *guids = std::move(result);
  return Status::OK();
}

}  // namespace sar
