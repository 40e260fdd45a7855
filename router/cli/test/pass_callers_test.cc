// Issue 37: every sar-route command that routes does it through libsar's one routing pass, so
// `compare`, `study` and `eval --source-lids` get what `route` (and the plugin) get: an alltoall
// job gets FORS, a mapping without jobs gets dfsssp, with the same notes as `route`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command_test_util.h"
#include "sar/io/guid2lid.h"
#include "sar/io/job_file.h"
#include "sar/io/topology.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using Json = nlohmann::json;
using testcmd::Outcome;

class PassCallers : public testcmd::ScratchTest {
 protected:
  PassCallers() : ScratchTest("sar_route_pass_callers_test") {}
  void SetUp() override {
    ScratchTest::SetUp();
    const Fabric f = testfab::FatTree2(4, 4, 2);  // 4 leaves of 2 hosts, 4 spines
    ASSERT_TRUE(WriteTopology(Path("f.topo"), f, {}).ok());
    ASSERT_TRUE(WriteGuid2Lid(Path("f.lids"), f).ok());
    JobMapping m;
    m.jobs.push_back({"7", {"h0000", "h0002", "h0004", "h0006"}, JobPattern::kAllToAll});
    ASSERT_TRUE(WriteJobMapping(Path("alltoall.map"), m).ok());
    ASSERT_TRUE(WriteJobMapping(Path("empty.map"), JobMapping()).ok());
  }
  Json Command(const std::string& args) {
    const Outcome o = RunIn(SAR_ROUTE_BIN, args + " --json --threads 1");
    EXPECT_EQ(o.exit_code, 0) << args << "\n" << o.err;
    try {
      return Json::parse(o.out);
    } catch (const Json::exception& e) {
      ADD_FAILURE() << args << ": " << e.what() << "\n" << o.out;
      return Json();
    }
  }
  std::string Topology() const { return " -t " + Path("f.topo") + " --lids " + Path("f.lids"); }
};

TEST_F(PassCallers, EveryCommandGetsTheRoutePassNotes) {
  for (const char* map : {"alltoall.map", "empty.map"}) {
    const std::string jobs = " -j " + Path(map);
    const Json route = Command("route -e sar" + Topology() + jobs + " -o " + Path("t.lfts"));
    const Json compare = Command("compare -e sar" + Topology() + jobs);
    const Json study =
        Command("study -e sar --links 0 --switches 0 --clusters 4" + Topology() + jobs);
    // eval judges with 15 lanes by default; --vls 8 gives its pass route's options.
    const Json eval =
        Command("eval --vls 8 --source-lids sar -l " + Path("t.lfts") + Topology() + jobs);
    const bool alltoall = std::string(map) == "alltoall.map";
    const std::string engine = alltoall ? "sar" : "dfsssp";
    ASSERT_TRUE(route.contains("notes"));
    const std::vector<std::string> notes = route["notes"].get<std::vector<std::string>>();
    const std::string want =
        alltoall ? "fors job 7: 4 hosts"
                 : "job mapping " + Path(map) + " lists no jobs: routing with plain dfsssp";
    bool noted = false;
    for (const std::string& n : notes) noted = noted || n.rfind(want, 0) == 0;
    EXPECT_TRUE(noted) << want << "\n" << route.dump(1);
    EXPECT_EQ(route["engine"], engine);
    EXPECT_EQ(compare["engines"][0]["engine_used"], engine);
    EXPECT_EQ(compare["engines"][0]["pass_notes"], notes);
    EXPECT_EQ(study["engines"][0]["engine_used"], engine);
    EXPECT_EQ(study["engines"][0]["notes"], notes);
    EXPECT_EQ(eval["source_lids_pass"]["engine_used"], engine);
    EXPECT_EQ(eval["source_lids_pass"]["notes"], notes);
    EXPECT_EQ(compare["engines"][0]["valid"], true);
  }
}

}  // namespace
}  // namespace sar
