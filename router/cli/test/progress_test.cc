// `route`, `eval` and `compare` say what they are doing on stderr when asked (--progress on, or
// auto on a terminal), one line per step in order, and nothing with --progress off or --json
// (auto: the tests' stderr is a file, not a terminal). Issue 38: at 45k hosts they were silent
// for 17-39 s.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "command_test_util.h"
#include "sar/io/guid2lid.h"
#include "sar/io/job_file.h"
#include "sar/io/topology.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using testcmd::Outcome;

class SarRouteProgress : public testcmd::ScratchTest {
 protected:
  SarRouteProgress() : ScratchTest("sar_route_progress_test") {}
  void SetUp() override {
    ScratchTest::SetUp();
    const Fabric f = testfab::FatTree2(2, 2, 2);  // hosts h0000..h0003, two per leaf
    ASSERT_TRUE(WriteTopology(Path("f.topo"), f, {}).ok());
    ASSERT_TRUE(WriteGuid2Lid(Path("f.lids"), f).ok());
    JobMapping m;
    m.jobs.push_back({"7", {"h0000", "h0002"}, JobPattern::kDefault});
    ASSERT_TRUE(WriteJobMapping(Path("jobs.map"), m).ok());
    fabric_ = " -t " + Path("f.topo") + " --lids " + Path("f.lids") + " -j " + Path("jobs.map");
  }
  Outcome SarRoute(const std::string& args) { return RunIn(SAR_ROUTE_BIN, args); }

  // The step lines of `err` ("sar-route <cmd>: [  t s] what"), in order, times checked rising.
  static std::vector<std::string> Steps(const std::string& err, const std::string& cmd) {
    const std::regex line("sar-route " + cmd + R"(: \[ *([0-9.]+) s\] (.*))");
    std::vector<std::string> steps;
    double last = -1;
    for (auto it = std::sregex_iterator(err.begin(), err.end(), line); it != std::sregex_iterator();
         ++it) {
      const double t = std::stod((*it)[1].str());
      EXPECT_GE(t, last) << err;
      last = t;
      steps.push_back((*it)[2].str());
    }
    return steps;
  }
  std::string fabric_;
};

TEST_F(SarRouteProgress, EachCommandNamesItsStepsInOrder) {
  Outcome r = SarRoute("route" + fabric_ + " -e sar -o " + Path("t.lfts") + " --progress on");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> steps = Steps(r.err, "route");
  ASSERT_EQ(steps.size(), 3u) << r.err;
  EXPECT_EQ(steps[0], "reading the fabric and the jobs");
  EXPECT_EQ(steps[1].rfind("routing with sar and validating", 0), 0u) << steps[1];
  EXPECT_EQ(steps[2], "writing " + Path("t.lfts"));

  r = SarRoute("eval" + fabric_ + " -l " + Path("t.lfts") + " --progress on");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  steps = Steps(r.err, "eval");
  ASSERT_EQ(steps.size(), 4u) << r.err;
  EXPECT_EQ(steps[0], "reading the fabric and the tables");
  EXPECT_EQ(steps[1].rfind("validating and analysing", 0), 0u) << steps[1];
  EXPECT_EQ(steps[3], "per-job flows of 1 jobs, every job at once");

  r = SarRoute("compare" + fabric_ + " -e sar,dfsssp --progress on");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  steps = Steps(r.err, "compare");
  ASSERT_EQ(steps.size(), 3u) << r.err;
  EXPECT_EQ(steps[1], "routing, validating and judging with sar");
  EXPECT_EQ(steps[2], "routing, validating and judging with dfsssp");
}

TEST_F(SarRouteProgress, QuietWhenOffWithJsonAndOffATerminal) {
  ASSERT_EQ(SarRoute("route" + fabric_ + " -e sar -o " + Path("t.lfts")).exit_code, 0);
  for (const std::string& args :
       {"eval" + fabric_ + " -l " + Path("t.lfts") + " --progress off",
        "eval" + fabric_ + " -l " + Path("t.lfts") + " --json",
        "eval" + fabric_ + " -l " + Path("t.lfts"),  // auto, stderr a file
        "route" + fabric_ + " -e sar -o " + Path("u.lfts") + " --json"}) {
    const Outcome r = SarRoute(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("] "), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_EQ(
      SarRoute("eval" + fabric_ + " -l " + Path("t.lfts") + " --progress sometimes").exit_code, 2);
}

}  // namespace
}  // namespace sar
