// Status: the outcome of an operation that can fail. Nothing in libsar throws.
//
// An OK status carries no message. An error carries a code and a message that says what went
// wrong and where: readers put "path:line: " in front of the message.
// Thread-safety: a Status is a plain value.
#pragma once

#include <string>
#include <utility>

namespace sar {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // the caller asked for something impossible
    kCorruption,       // malformed input file (message has file:line)
    kIOError,          // the OS refused (message names the file)
    kNotFound,         // a named thing does not exist
    kFailed,           // a computation cannot succeed on this input (e.g. disconnected fabric)
  };

  Status() = default;
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string msg) {
    return {Code::kInvalidArgument, std::move(msg)};
  }
  static Status Corruption(std::string msg) { return {Code::kCorruption, std::move(msg)}; }
  static Status IOError(std::string msg) { return {Code::kIOError, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status Failed(std::string msg) { return {Code::kFailed, std::move(msg)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Returns early from the enclosing function when `expr` is not OK.
#define SAR_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::sar::Status sar_status_ = (expr);        \
    if (!sar_status_.ok()) return sar_status_; \
  } while (0)

}  // namespace sar
