// The CLI tests' one way to run a real binary: a shell command line, stdout and stderr into
// files of a scratch directory, stdin from /dev/null; the exit code and both texts back.
// Used by sar-route's, sar-filterd's and sar-notify's command-line tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace sar::testcmd {

struct Outcome {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs `command` (shell syntax) with its output in <dir>/out and <dir>/err.
inline Outcome Run(const std::string& command, const std::string& dir) {
  const std::string cmd = command + " >" + dir + "/out 2>" + dir + "/err </dev/null";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(dir + "/out");
  r.err = Slurp(dir + "/err");
  return r;
}

/// A test with its own scratch directory (/tmp/<prefix>.XXXXXX), removed after it.
class ScratchTest : public ::testing::Test {
 protected:
  explicit ScratchTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    std::string t = "/tmp/" + prefix_ + ".XXXXXX";
    ASSERT_NE(::mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  void TearDown() override {
    std::error_code ec;  // a scratch directory left behind is not a test failure
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  /// Runs `binary args` in the scratch directory (see Run).
  Outcome RunIn(const std::string& binary, const std::string& args) const {
    return testcmd::Run(binary + " " + args, dir_);
  }

  std::string dir_;

 private:
  std::string prefix_;
};

}  // namespace sar::testcmd
