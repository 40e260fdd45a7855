// Issue 19 defect 14: an unopenable log_file aborted sar-filterd (spdlog_ex), and a missing
// parent directory was created silently.
#include "log_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "test_util.h"

namespace sar::filterd {
namespace {

TEST(LogFile, MissingParentIsAnErrorAndIsNotCreated) {
  TempDir dir;
  std::shared_ptr<spdlog::logger> logger;
  Status s = MakeFileLogger("t", dir.Join("no/such/sar-filterd.log"), &logger);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(logger, nullptr);
  EXPECT_NE(s.message().find("log_file '" + dir.Join("no/such/sar-filterd.log") + "'"),
            std::string::npos)
      << s.message();
  struct stat st {};
  EXPECT_NE(stat(dir.Join("no").c_str(), &st), 0) << "a missing parent must not be created";
}

TEST(LogFile, UnopenableFileIsAnErrorNotAnException) {
  TempDir dir;
  mkdir(dir.Join("adir").c_str(), 0700);
  std::ofstream(dir.Join("afile")) << "x";
  std::shared_ptr<spdlog::logger> logger;
  for (const std::string& path : {dir.Join("adir"), dir.Join("afile/x.log")}) {
    Status s;
    EXPECT_NO_THROW(s = MakeFileLogger("t", path, &logger)) << path;
    EXPECT_FALSE(s.ok()) << path;
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  }
  if (geteuid() != 0) {  // root opens a 0400 file anyway
    std::ofstream(dir.Join("ro.log")) << "";
    chmod(dir.Join("ro.log").c_str(), 0400);
    Status s = MakeFileLogger("t", dir.Join("ro.log"), &logger);
    EXPECT_NE(s.message().find("Permission denied"), std::string::npos) << s.message();
  }
}

TEST(LogFile, AppendsToTheFile) {
  TempDir dir;
  std::ofstream(dir.Join("f.log")) << "old line\n";
  std::shared_ptr<spdlog::logger> logger;
  ASSERT_TRUE(MakeFileLogger("t", dir.Join("f.log"), &logger).ok());
  logger->info("new line");
  logger->flush();
  std::ifstream in(dir.Join("f.log"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("old line\n", 0), 0u);
  EXPECT_NE(text.str().find("new line"), std::string::npos);
}

}  // namespace
}  // namespace sar::filterd
