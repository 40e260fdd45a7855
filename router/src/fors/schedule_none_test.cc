// The "none" schedule (issue 35): an alltoall job the routing pass gives no FORS gets a file that
// says so and why, from the pass's own reason; the reader takes that form only whole.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "sar/fors/fors_job.h"
#include "sar/pass/routing_pass.h"
#include "test_fabrics.h"

namespace sar {
namespace {

std::string TempDir() {
  std::string t = "/tmp/fors_none_test.XXXXXX";
  EXPECT_NE(::mkdtemp(t.data()), nullptr);
  return t;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// FT(2;2,3): 3 leaves with 2 hosts each (h0000.. by leaf), 2 spines.
Fabric SmallFt2() { return testfab::FatTree2(3, 2, 2); }

Status Pass(const Fabric& f, const std::string& engine, const std::string& mapping_text,
            std::vector<ForsJobPlan>* plans, std::vector<ForsJobNone>* none) {
  const std::string dir = TempDir();
  RoutingOptions o;
  o.engine = engine;
  o.mapping_path = dir + "/mapping";
  std::ofstream(o.mapping_path) << mapping_text;
  RoutingInputs in;
  SAR_RETURN_IF_ERROR(LoadRoutingInputs(f, o, &in));
  RoutingOutput out;
  ValidationReport report;
  return RunRoutingPass(in, &out, &report, AnalysisOptions(), nullptr, plans, none);
}

TEST(ForsNone, TheRoutingPassSaysWhyAJobHasNoFors) {
  std::vector<ForsJobPlan> plans;
  std::vector<ForsJobNone> none;
  // Not a 2-level fat-tree: every alltoall job, with the detector's reason; default jobs none.
  const Fabric ring = testfab::Ring(3, 2);
  ASSERT_TRUE(
      Pass(ring, "sar", "h0000 11 alltoall\nh0003 11 alltoall\nh0001 12\nh0005 12\n", &plans, &none)
          .ok());
  EXPECT_TRUE(plans.empty());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].job_id, "11");
  EXPECT_EQ(none[0].hosts, 2u);
  EXPECT_NE(none[0].reason.find("not a 2-level fat-tree"), std::string::npos) << none[0].reason;

  // A 2-level tree: a job with FORS, one sharing its hosts (SAR), one of a single host.
  const Fabric f = SmallFt2();
  ASSERT_TRUE(Pass(f, "sar",
                   "h0000 21 alltoall\nh0002 21 alltoall\nh0004 21 alltoall\n"
                   "h0002 22 alltoall\nh0005 22 alltoall\nh0001 23 alltoall\n",
                   &plans, &none)
                  .ok());
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].job_id, "21");
  ASSERT_EQ(none.size(), 2u);
  EXPECT_EQ(none[0].job_id, "22");
  EXPECT_NE(none[0].reason.find("shares hosts"), std::string::npos) << none[0].reason;
  EXPECT_EQ(none[1].job_id, "23");
  EXPECT_NE(none[1].reason.find("1 of the job's hosts"), std::string::npos) << none[1].reason;

  // Another engine: FORS is engine sar's.
  ASSERT_TRUE(Pass(f, "dfsssp", "h0000 31 alltoall\nh0004 31 alltoall\n", &plans, &none).ok());
  EXPECT_TRUE(plans.empty());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].reason.find("engine dfsssp"), std::string::npos) << none[0].reason;

  // Two leaves without a common working spine: leaf 0 keeps only spine 0, leaf 2 only spine 1.
  Fabric cut;
  {
    std::vector<NodeId> leaf, spine;
    for (int i = 0; i < 3; ++i) {
      leaf.push_back(testfab::AddSwitch(&cut, 4, testfab::Numbered("L", i, 2)));
    }
    for (int k = 0; k < 2; ++k) {
      spine.push_back(testfab::AddSwitch(&cut, 3, testfab::Numbered("S", k, 2)));
    }
    int h = 0;
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < 2; ++k) {
        testfab::Cable(&cut, testfab::AddHost(&cut, 1, testfab::Numbered("h", h++, 4)), leaf[i]);
      }
      for (int k = 0; k < 2; ++k) {
        if (!((i == 0 && k == 1) || (i == 2 && k == 0))) testfab::Cable(&cut, leaf[i], spine[k]);
      }
    }
    testfab::AssignTestLids(&cut, 0);
  }
  ASSERT_TRUE(Pass(cut, "sar", "h0000 41 alltoall\nh0004 41 alltoall\n", &plans, &none).ok());
  EXPECT_TRUE(plans.empty());
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].reason.find("routed by SAR"), std::string::npos) << none[0].reason;
}

TEST(ForsNone, FileRoundTripAndTheReaderTakesTheFormOnlyWhole) {
  const std::string dir = TempDir();
  const std::string path = ForsSchedulePath(dir + "/mapping", "4712");
  ForsJobNone n{"4712", "the fabric is not a 2-level fat-tree\n(a second line)", 40};
  EXPECT_EQ(FormatForsNoneFile(n, 1795377601),
            "# sar-fors-schedule 1\n"
            "# job 4712 epoch 1795377601 generation none phases 0 lower_bound 0 hosts 40\n"
            "# none: the fabric is not a 2-level fat-tree (a second line)\n"
            "phase,src,dst,dlid\n");
  bool written = false;
  ASSERT_TRUE(WriteForsNoneSchedule(path, n, 5, &written).ok());
  EXPECT_TRUE(written);
  ForsScheduleFile file;
  ASSERT_TRUE(ReadForsSchedule(path, &file).ok());
  EXPECT_TRUE(file.none);
  EXPECT_EQ(file.job_id, "4712");
  EXPECT_EQ(file.epoch, 5u);
  EXPECT_EQ(file.phases, 0);
  EXPECT_TRUE(file.rows.empty());
  EXPECT_EQ(file.none_reason, "the fabric is not a 2-level fat-tree (a second line)");
  // The same reason again: left alone (epoch 5); another reason: rewritten.
  ASSERT_TRUE(WriteForsNoneSchedule(path, n, 6, &written).ok());
  EXPECT_FALSE(written);
  n.reason = "routed by SAR: leaves 0 and 2 share no working spine";
  ASSERT_TRUE(WriteForsNoneSchedule(path, n, 7, &written).ok());
  EXPECT_TRUE(written);
  ASSERT_TRUE(ReadForsSchedule(path, &file).ok());
  EXPECT_EQ(file.epoch, 7u);
  EXPECT_EQ(file.none_reason, n.reason);

  const std::string head = "# sar-fors-schedule 1\n# job 1 epoch 1 generation ";
  const std::string none_head = head + "none phases 0 lower_bound 0 hosts 2\n";
  const struct {
    std::string text, why;
  } bad[] = {
      {none_head + "phase,src,dst,dlid\n", "no reason line"},
      {none_head + "# none: \nphase,src,dst,dlid\n", "an empty reason"},
      {none_head + "# none: x\nphase,src,dst,dlid\n0,a,b,3\n", "a row"},
      {none_head + "# none: x\n# none: y\nphase,src,dst,dlid\n", "two reasons"},
      {none_head + "phase,src,dst,dlid\n# none: x\n", "the reason after the columns"},
      {head + "none phases 3 lower_bound 0 hosts 2\n# none: x\nphase,src,dst,dlid\n",
       "phases with generation none"},
      {head + "00ab phases 1 lower_bound 1 hosts 2\n# none: x\nphase,src,dst,dlid\n0,a,b,3\n",
       "a reason in a real schedule"},
  };
  for (const auto& b : bad) {
    const Status s = ParseForsSchedule(b.text, "t", &file);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << b.why << ": " << s.ToString();
  }
}

TEST(ForsNone, PublishWritesSchedulesAndNoneFilesAndRemovesTheRest) {
  const Fabric f = SmallFt2();
  std::vector<ForsJobPlan> plans;
  std::vector<ForsJobNone> none;
  ASSERT_TRUE(Pass(f, "sar",
                   "h0000 21 alltoall\nh0002 21 alltoall\nh0004 21 alltoall\n"
                   "h0002 22 alltoall\nh0005 22 alltoall\n",
                   &plans, &none)
                  .ok());
  ASSERT_EQ(plans.size(), 1u);
  ASSERT_EQ(none.size(), 1u);
  const std::string mapping = TempDir() + "/mapping";
  std::ofstream(ForsSchedulePath(mapping, "20")) << "an old job's schedule";
  const std::vector<std::string> rows{FormatForsScheduleRows(f, plans[0])};
  int current = 0;
  ASSERT_TRUE(
      PublishForsSchedules(mapping, plans, rows, none, 9, static_cast<gid_t>(-1), &current).ok());
  EXPECT_EQ(current, 2);
  EXPECT_EQ(Slurp(ForsSchedulePath(mapping, "21")), FormatForsScheduleFile(plans[0], rows[0], 9));
  EXPECT_EQ(Slurp(ForsSchedulePath(mapping, "22")), FormatForsNoneFile(none[0], 9));
  EXPECT_EQ(::access(ForsSchedulePath(mapping, "20").c_str(), F_OK), -1);
  // Rows that do not match the plans are a caller's bug, not a file.
  EXPECT_FALSE(
      PublishForsSchedules(mapping, plans, {}, none, 9, static_cast<gid_t>(-1), &current).ok());
}

}  // namespace
}  // namespace sar
