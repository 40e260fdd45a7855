// Scratch directories for the unit tests.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace sar::filterd {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/sarfilterd_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace sar::filterd
