#include "sar/status.h"

namespace sar {

std::string Status::ToString() const {
  const char* prefix = "";
  switch (code_) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      prefix = "invalid argument: ";
      break;
    case Code::kCorruption:
      prefix = "malformed input: ";
      break;
    case Code::kIOError:
      prefix = "I/O error: ";
      break;
    case Code::kNotFound:
      prefix = "not found: ";
      break;
    case Code::kFailed:
      prefix = "failed: ";
      break;
  }
  return prefix + message_;
}

}  // namespace sar
