#include "sar/io/file_util.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "io/test_util.h"

namespace sar {
namespace {

int CountEntries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  int n = 0;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++n;
  }
  ::closedir(d);
  return n;
}

TEST(FileUtilTest, WriteThenReadBack) {
  const std::string dir = io::testing::MakeTempDir();
  const std::string path = dir + "/f.txt";
  std::string big(300000, 'x');  // larger than one read buffer
  big[12345] = '\0';             // binary-safe
  ASSERT_TRUE(WriteFileAtomic(path, big).ok());
  std::string back;
  ASSERT_TRUE(ReadFileToString(path, &back).ok());
  EXPECT_EQ(back, big);
  ASSERT_TRUE(WriteFileAtomic(path, "short\n").ok());  // replaces
  ASSERT_TRUE(ReadFileToString(path, &back).ok());
  EXPECT_EQ(back, "short\n");
  EXPECT_EQ(CountEntries(dir), 1);  // no temporary file left behind
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);  // a new file is readable by all, not mkstemp's 0600
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomic(path, "again\n").ok());
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // a replaced file keeps its mode
}

// Issue 34: a symlink at the path took its target's mode. A root-owned schedule linked to a
// 0666 file became 0666 itself, and any user could rewrite what the plugin served.
TEST(FileUtilTest, ASymlinkIsReplacedWithTheDefaultModeNotItsTargets) {
  const std::string dir = io::testing::MakeTempDir();
  const std::string target = dir + "/open-to-all";
  const std::string path = dir + "/schedule";
  ASSERT_TRUE(WriteFileAtomic(target, "theirs\n").ok());
  ASSERT_EQ(::chmod(target.c_str(), 0666), 0);
  ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(path, "ours\n").ok());
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));  // the link is replaced, not followed
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  std::string back;
  ASSERT_TRUE(ReadFileToString(target, &back).ok());
  EXPECT_EQ(back, "theirs\n");  // the target is untouched
}

// A pipe has no size to check beforehand (fstat says 0): the limit is enforced while reading.
// Exactly the limit is read whole; one byte more is refused, named "at least" (the stream was
// not read to its end), and nothing is returned.
TEST(FileUtilTest, StreamedInputOfExactlyTheLimitIsReadOneByteMoreRefused) {
  for (size_t extra : {0, 1}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::string data(1000 + extra, 'p');
    data[17] = '\n';
    ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ::close(fds[1]);
    ReadOptions o;
    o.max_bytes = 1000;
    std::string out = "old";
    const Status s = ReadFileToString("/proc/self/fd/" + std::to_string(fds[0]), o, &out);
    ::close(fds[0]);
    if (extra == 0) {
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_EQ(out, data);
    } else {
      EXPECT_EQ(s.code(), Status::Code::kIOError);
      EXPECT_NE(s.message().find("at least 1001 bytes, more than the limit of 1000 bytes"),
                std::string::npos)
          << s.message();
      EXPECT_TRUE(out.empty());
    }
  }
}

TEST(FileUtilTest, ErrorsNameTheFileAndReason) {
  std::string out = "old";
  Status s = ReadFileToString("/nonexistent-dir/x", &out);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("/nonexistent-dir/x"), std::string::npos);
  EXPECT_NE(s.message().find(std::strerror(ENOENT)), std::string::npos) << s.message();
  s = WriteFileAtomic("/nonexistent-dir/y", "data");
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("/nonexistent-dir/y"), std::string::npos);
  EXPECT_NE(s.message().find(std::strerror(ENOENT)), std::string::npos) << s.message();
}

TEST(FileUtilTest, FailedRenameLeavesTargetAndNoTemp) {
  const std::string dir = io::testing::MakeTempDir();
  const std::string target = dir + "/sub";
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((target + "/keep").c_str(), 0755), 0);  // a non-empty directory
  const Status s = WriteFileAtomic(target, "data");         // cannot rename a file over a directory
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find(target), std::string::npos);
  EXPECT_EQ(CountEntries(dir), 1);
}

// `sar-route route -o /dev/null` as root used to rename a temporary file over /dev/null,
// leaving a regular file where the device was (and every later reader of /dev/null broken).
TEST(FileUtilTest, ACharacterDeviceIsWrittenInPlaceNeverReplaced) {
  ASSERT_TRUE(WriteFileAtomic("/dev/null", "tables\n").ok());
  struct stat st {};
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is no longer a character device";
}

TEST(FileUtilTest, AFifoIsRefusedWithoutBlockingAndKept) {
  const std::string dir = io::testing::MakeTempDir();
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Status s = WriteFileAtomic(fifo, "data");  // no reader: an open would block for ever
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("a FIFO, not a regular file"), std::string::npos) << s.message();
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(CountEntries(dir), 1);  // no temporary left behind
}

}  // namespace
}  // namespace sar
