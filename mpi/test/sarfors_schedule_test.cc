// libsarfors's schedule reader (mpi/sarfors_schedule.c) on hand-written files: what a host gets
// from a valid schedule, the "none" form, and every kind of bad or hostile file, which must be
// refused with path:line (never blocking on a FIFO, never reading past the cap).
#include "sarfors_schedule.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

class ScheduleReader : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sarfors_schedule_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    sarfors_schedule_free(&s_);
    for (const std::string& f : files_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0640) {
    const std::string path = dir_ + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    EXPECT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    chmod(path.c_str(), mode);
    files_.push_back(path);
    return path;
  }
  // Reads `path` for `host`; returns the error message ("" on success).
  std::string Read(const std::string& path, const char* host, size_t max = 1 << 20) {
    char err[300] = "";
    sarfors_schedule_free(&s_);
    if (sarfors_schedule_read(path.c_str(), host, max, &s_, err, sizeof err) == 0) return "";
    EXPECT_NE(err[0], '\0');
    return err;
  }
  std::string dir_;
  std::vector<std::string> files_;
  sarfors_schedule_t s_{};
};

// Three hosts, two phases each way: a ring shift.
const char kHeader[] =
    "# sar-fors-schedule 1\n"
    "# job 4712 epoch 17 generation 9c4e0d5a1b2f3e47 phases 2 lower_bound 2 hosts 3\n"
    "phase,src,dst,dlid\n";
const char kRows[] =
    "0,h1,h2,2\n0,h2,h3,3\n0,h3,h1,1\n"
    "1,h1,h3,3\n1,h2,h1,1\n1,h3,h2,2\n";

TEST_F(ScheduleReader, AHostGetsItsPartnersPerPhase) {
  const std::string path = Write("s", std::string(kHeader) + kRows);
  ASSERT_EQ(Read(path, "h2"), "");
  EXPECT_FALSE(s_.none);
  EXPECT_STREQ(s_.job, "4712");
  EXPECT_STREQ(s_.generation, "9c4e0d5a1b2f3e47");
  ASSERT_EQ(s_.num_hosts, 3);
  ASSERT_EQ(s_.num_phases, 2);
  ASSERT_GE(s_.my_host, 0);
  EXPECT_STREQ(s_.names[s_.my_host], "h2");
  EXPECT_STREQ(s_.names[s_.send_to[0]], "h3");
  EXPECT_STREQ(s_.names[s_.recv_from[0]], "h1");
  EXPECT_STREQ(s_.names[s_.send_to[1]], "h1");
  EXPECT_STREQ(s_.names[s_.recv_from[1]], "h3");
  const uint64_t hash = s_.content_hash;
  // The content hash is what the ranks agree on: one changed byte changes it.
  std::string other = std::string(kHeader) + kRows;
  other[other.find("epoch 17") + 7] = '8';
  ASSERT_EQ(Read(Write("t", other), "h2"), "");
  EXPECT_NE(s_.content_hash, hash);
  ASSERT_EQ(Read(path, "h2"), "");
  EXPECT_EQ(s_.content_hash, hash);
}

TEST_F(ScheduleReader, AHostWithoutRowsIsNotAnError) {
  ASSERT_EQ(Read(Write("s", std::string(kHeader) + kRows), "h9"), "");
  EXPECT_EQ(s_.my_host, -1);
  EXPECT_EQ(s_.num_hosts, 3);
}

TEST_F(ScheduleReader, TheNoneForm) {
  const std::string none =
      "# sar-fors-schedule 1\n"
      "# job 4712 epoch 1795377601 generation none phases 0 lower_bound 0 hosts 40\n"
      "# none: fabric is not a 2-level fat-tree\n"
      "phase,src,dst,dlid\n";
  ASSERT_EQ(Read(Write("n", none), "h1"), "");
  EXPECT_TRUE(s_.none);
  EXPECT_STREQ(s_.reason, "fabric is not a 2-level fat-tree");
  EXPECT_EQ(s_.my_host, -1);
  EXPECT_NE(Read(Write("n2", none + "0,h1,h2,2\n"), "h1")
                .find("n2:5: a row in a schedule of "
                      "generation none"),
            std::string::npos);
}

TEST_F(ScheduleReader, BrokenFilesAreRefusedWithFileAndLine) {
  const std::string h = kHeader;
  struct Case {
    std::string text, error;
  } cases[] = {
      {"# sar-fors-schedule 2\n" + h.substr(22) + kRows, ":1: not a sar FORS schedule"},
      {"# sar-fors-schedule 1\n# job 1 epoch x generation g phases 2 lower_bound 2 hosts 3\n",
       ":2: bad header line"},
      {"# sar-fors-schedule 1\nphase,src,dst,dlid\n", ":2: missing header line"},
      {h.substr(0, h.size() - 19) + "phase,src,dst\n", ":3: expected 'phase,src,dst,dlid'"},
      {h + "0,h1,h2\n", ":4: expected 'phase,src,dst,dlid'"},
      {h + "2,h1,h2,2\n", ":4: bad phase (the header says 2 phases)"},
      {h + "1,h1,h2,2\n0,h2,h3,3\n", ":5: phases out of order"},
      {h + "0,h1,h2,0\n", ":4: bad dlid"},
      {h + "0,h1,h2,49152\n", ":4: bad dlid"},
      {h + "0,h1,h1,1\n", ":4: a host sends to itself"},
      {h + "0,h1,h2,2\n0,h1,h3,3\n", ":5: host h1 sends twice in phase 0"},
      {h + "0,h3,h1,1\n0,h2,h1,1\n", ":5: host h1 receives twice in phase 0"},
      {h + "0,h1,h2,2\n0,h3,h4,2\n", ":5: more host names than the header's 3 hosts"},
      {h + "0,h 1,h2,2\n", ":4: bad host name"},
      {h + "0,h1,h2,2\n0,h2,h3,3\n0,h3,h1,1\n", ": host h1: 1 sends and 1 receives"},
      {h + "0,h1,h2,2\n0,h2,h3,3\n0,h3,h1,1\n1,h1,h2,2\n1,h2,h1,1\n1,h3,h2,2\n",
       ": host h1: 2 sends and 2 receives (a partner twice)"},
      {h + std::string(600, 'x') + "\n", ":4: line longer than 511 bytes"},
      {h + std::string("0,h1,h2,2\0\n", 11), ":4: NUL byte"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string name = "bad" + std::to_string(i++);
    const std::string err = Read(Write(name, c.text), "h1");
    EXPECT_NE(err.find(name + c.error), std::string::npos) << name << ": " << err;
  }
}

TEST_F(ScheduleReader, HostileFilesAreRefusedWithoutBlocking) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  files_.push_back(fifo);
  EXPECT_NE(Read(fifo, "h1").find("not a regular file (refused)"), std::string::npos);
  EXPECT_NE(Read("/dev/zero", "h1").find("not a regular file (refused)"), std::string::npos);
  const std::string good = Write("s", std::string(kHeader) + kRows);
  const std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(good.c_str(), link.c_str()), 0);
  files_.push_back(link);
  EXPECT_NE(Read(link, "h1").find("a symbolic link (refused"), std::string::npos);
  EXPECT_NE(Read(Write("w", std::string(kHeader) + kRows, 0666), "h1").find("writable by every"),
            std::string::npos);
  EXPECT_NE(Read(good, "h1", 100).find("more than 100 (refused)"), std::string::npos);
  EXPECT_NE(Read(dir_ + "/absent", "h1").find("No such file"), std::string::npos);
  EXPECT_EQ(Read(good, "h1"), "");
}

}  // namespace
