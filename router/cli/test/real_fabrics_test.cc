// sar-route on the public ibnetdiscover dumps of shared/data/fabrics/ (beside the source tree,
// never copied into it; each test skips when its dump is absent): every dump loads with what its
// README says it holds, and dfsssp and minhop route it to tables eval judges valid, or the
// routing pass says why not. No dump has unreachable parts, so nothing here needs
// --allow-disconnected: eval must find every pair reachable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "command_test_util.h"
#include "io/test_util.h"
#include "sar/io/topology.h"

namespace sar {
namespace {

using io::testing::RealFabricPath;
using testcmd::Outcome;

class RealFabrics : public testcmd::ScratchTest {
 protected:
  RealFabrics() : ScratchTest("sar_real_fabrics_test") {}
  Outcome SarRoute(const std::string& args) { return RunIn(SAR_ROUTE_BIN, args); }
};

struct Dump {
  const char* file;
  int switches, cas, cabled_ca_ports;
  bool minhop_deadlocks;  // min-hop routes between CAs close a dependency cycle in one layer
  // Min-hop routes between CAs are acyclic in one layer, but not once the switch LIDs count
  // (the default check): the routing pass gives them layers (selene: 4).
  bool minhop_layered;
  // Node classes (docs/formats.md): distinct hosts, CAs named by node GUID (description
  // "MT<digits> ..."), SHARP Aggregation Nodes; counted from the files by hand (grep).
  int hosts, nameless, aggregation_nodes;
};

// Per dump, from shared/data/fabrics/README.md and the files themselves.
const Dump kDumps[] = {
    // 160 dual-port HCAs, each shown as two one-port CAs with consecutive node GUIDs.
    // One CA is nameless ("MT4123 ConnectX6"); 618 dual-port hosts' CAs share a name.
    {"selene-storage.ibnetdiscover", 160, 1247, 1247, false, true, 629, 1, 0},
    // 542 HCAs and a SHARP Aggregation Node CA on each of the 40 switches. Some leaf-spine pairs
    // have no cable, so some min-hop paths go leaf-spine-leaf-spine-leaf: a dependency cycle,
    // which route refuses to write (dfsssp breaks it with layers).
    // 69 nameless HCAs (description "MT4129 ConnectX7 ..."); a DGX's HCAs share its name.
    {"nvidia-ndr-superpod.ibnetdiscover", 40, 582, 582, true, false, 191, 69, 40},
    // Hosts on a spine; a storage host with both ports on one switch.
    {"loginoff-stage.ibnetdiscover", 8, 144, 145, false, false, 144, 0, 0},
    // Self-loop cables on a switch; dual-port HCAs with consecutive node GUIDs.
    // One Aggregation Node; hosts with several HCAs.
    {"nvidia-lab-small.ibnetdiscover", 2, 13, 13, false, false, 5, 0, 1},
    // A 1xSDR cable parallel to a 4xSDR one; lmc 1.
    // Every CA "MT23108 InfiniHost ...": named by node GUID.
    {"ibtopotool-example-1.ibnetdiscover", 2, 4, 5, false, false, 4, 4, 0},
    {"ibtopotool-example-2.ibnetdiscover", 1, 2, 2, false, false, 2, 0, 0},
    // First line: ibnetdiscover's stderr (skipped with a warning); self-loops.
    {"ibtopotool-example-3.ibnetdiscover", 2, 6, 6, false, false, 5, 0, 0},
    // An HCA cabled only on port 2.
    {"ibtopotool-example-4.ibnetdiscover", 1, 1, 1, false, false, 1, 0, 0},
};

// What eval traces: from every cabled HCA port to every LID of every cabled port of another node.
int TracedPairs(const std::string& path) {
  Fabric f;
  EXPECT_TRUE(ReadTopology(path, &f).ok());
  const auto endpoints = f.Endpoints();
  int pairs = 0;
  for (const PortRef& s : endpoints) {
    for (const PortRef& t : endpoints) pairs += s.node == t.node ? 0 : 1 << f.lmc(t);
  }
  return pairs;
}

TEST_F(RealFabrics, EveryDumpLoadsAndRoutesToValidTables) {
  for (const Dump& d : kDumps) {
    SCOPED_TRACE(d.file);
    const std::string path = RealFabricPath(d.file);
    SAR_SKIP_IF_NO_REAL_FABRIC(path);
    const std::string topo = " -t " + path;
    const Outcome info = SarRoute("info --json" + topo);
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const nlohmann::json j = nlohmann::json::parse(info.out);
    EXPECT_EQ(j["switches"], d.switches);
    EXPECT_EQ(j["hcas"], d.cas);
    EXPECT_EQ(j["endpoints"], d.cabled_ca_ports);
    EXPECT_EQ(j["connected"], true);
    EXPECT_EQ(j["classes"]["hosts"], d.hosts);
    EXPECT_EQ(j["classes"]["host_hcas"], d.cas - d.aggregation_nodes);
    EXPECT_EQ(j["classes"]["nameless_hcas"], d.nameless);
    EXPECT_EQ(j["classes"]["aggregation_nodes"], d.aggregation_nodes);
    EXPECT_EQ(info.err.find("warning") != std::string::npos,
              std::string(d.file) == "ibtopotool-example-3.ibnetdiscover")
        << info.err;

    for (const char* engine : {"dfsssp", "minhop"}) {
      SCOPED_TRACE(engine);
      const std::string lfts = Path(std::string(d.file) + "." + engine + ".lfts");
      const std::string layers = Path(std::string(d.file) + "." + engine + ".layers");
      const Outcome r = SarRoute(std::string("route -e ") + engine + topo + " -o " + lfts +
                                 " --sl-out " + layers);
      if (d.minhop_deadlocks && std::string(engine) == "minhop") {
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_NE(r.err.find("cyclic channel dependency"), std::string::npos) << r.err;
        EXPECT_NE(::access(lfts.c_str(), F_OK), 0) << "route wrote invalid tables";
        continue;
      }
      ASSERT_EQ(r.exit_code, 0) << r.err;
      // Min-hop tables cyclic only through switch-LID routes get layers from the routing pass
      // (noted); the others do not.
      EXPECT_EQ(r.err.find("layers make them deadlock-free") != std::string::npos,
                d.minhop_layered && std::string(engine) == "minhop")
          << r.err;
      const Outcome e = SarRoute("eval --json" + topo + " --lfts " + lfts + " --layers " + layers);
      ASSERT_EQ(e.exit_code, 0) << e.err;
      const nlohmann::json v = nlohmann::json::parse(e.out);
      EXPECT_EQ(v["valid"], true) << v["invalid"];
      EXPECT_EQ(v["unreachable_pairs"], 0);
      EXPECT_EQ(v["loops"], 0);
      EXPECT_EQ(v["deadlock_free"], true);
      EXPECT_EQ(v["pairs"], TracedPairs(path));
    }
  }
}

// A dump taken before a subnet manager ran: every LID is 65535. sar-route warns and gives the
// fabric the deterministic LIDs; a dump where only some are unassigned needs --lids.
TEST_F(RealFabrics, UnassignedLidsGetTheDeterministicAssignment) {
  const std::string path = RealFabricPath("nvidia-lab-small.ibnetdiscover");
  SAR_SKIP_IF_NO_REAL_FABRIC(path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string fresh = std::regex_replace(text.str(), std::regex("lid [0-9]+"), "lid 65535");
  std::ofstream(Path("fresh.topo")) << fresh;
  const Outcome info = SarRoute("info --json -t " + Path("fresh.topo"));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["max_lid"], 13 + 2);  // HCA ports, then switches
  EXPECT_NE(info.err.find("fresh.topo:10: 15 port(s) with LID 65535"), std::string::npos)
      << info.err;
  const Outcome r = SarRoute("route -e minhop -t " + Path("fresh.topo") + " -o " + Path("f.lfts"));
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // One HCA port unassigned among assigned ones: no guess, a clear error.
  std::string partial = text.str();
  const size_t at = partial.find("# lid 28 lmc 0");
  ASSERT_NE(at, std::string::npos);
  partial.replace(at, 14, "# lid 65535 lmc 0");
  std::ofstream(Path("partial.topo")) << partial;
  const Outcome p = SarRoute("info -t " + Path("partial.topo"));
  EXPECT_EQ(p.exit_code, 3) << p.err;
  EXPECT_NE(p.err.find("HCA 'H-ec0d9a03007d7d0b' port 1 has no LID (give --lids)"),
            std::string::npos)
      << p.err;
}

// Rail-optimised DGX nodes on NVIDIA's SuperPOD dump: each host has 4 HCAs on 4 leaves (rails
// 01..04 of its scalable unit). A one-host job is not multi-switch (eval, and SAR routes it as
// dfsssp); hosts of one unit share a leaf on every rail, so rail-aligned traffic between them
// spans one leaf (4 with --job-hca-pairs all); hosts of two units span two and SAR reroutes.
TEST_F(RealFabrics, SuperpodRailJobsSpanWhereTheirTrafficCrosses) {
  const std::string path = RealFabricPath("nvidia-ndr-superpod.ibnetdiscover");
  SAR_SKIP_IF_NO_REAL_FABRIC(path);
  const std::string topo = " -t " + path;
  // a08-p1-dgx-04-c01/-c02: mlx5_0,1,4,5 on IBLEAF-01..04-04; b05-p1-dgx-05-c15: HCA-1,2,5,6
  // on IBLEAF-01..04-05 (the same rails under the other naming).
  std::ofstream(Path("one.map")) << "a08-p1-dgx-04-c01 1\n";
  std::ofstream(Path("unit.map")) << "a08-p1-dgx-04-c01 2\na08-p1-dgx-04-c02 2\n";
  std::ofstream(Path("two.map")) << "a08-p1-dgx-04-c01 3\nb05-p1-dgx-05-c15 3\n";
  const std::string dfsssp = Path("dfsssp.lfts");
  ASSERT_EQ(SarRoute("route -e dfsssp" + topo + " -o " + dfsssp).exit_code, 0);
  auto eval_job = [&](const std::string& map, const std::string& extra) {
    const Outcome e = SarRoute("eval --json --no-flows" + topo + " --lfts " + dfsssp + " --jobs " +
                               Path(map) + extra);
    EXPECT_EQ(e.exit_code, 0) << e.err;
    return nlohmann::json::parse(e.out)["jobs"].at(0);
  };
  for (const std::string extra : {"", " --job-hca-pairs all"}) {
    SCOPED_TRACE(extra);
    const nlohmann::json one = eval_job("one.map", extra);
    EXPECT_EQ(one["hosts"], 1);
    EXPECT_EQ(one["leaf_switches"], 1);
    EXPECT_EQ(one["efi_max"], 0);
    EXPECT_EQ(eval_job("unit.map", extra)["leaf_switches"], extra.empty() ? 1 : 4);
    EXPECT_EQ(eval_job("two.map", extra)["leaf_switches"], extra.empty() ? 2 : 8);
  }
  const std::string sar_one = Path("sar-one.lfts"), sar_two = Path("sar-two.lfts");
  ASSERT_EQ(
      SarRoute("route -e sar" + topo + " --jobs " + Path("one.map") + " -o " + sar_one).exit_code,
      0);
  EXPECT_EQ(testcmd::Slurp(sar_one), testcmd::Slurp(dfsssp)) << "a one-host job rerouted";
  ASSERT_EQ(
      SarRoute("route -e sar" + topo + " --jobs " + Path("two.map") + " -o " + sar_two).exit_code,
      0);
  EXPECT_NE(testcmd::Slurp(sar_two), testcmd::Slurp(dfsssp)) << "a two-unit job kept dfsssp's";
  const Outcome bad = SarRoute("eval" + topo + " --lfts " + dfsssp + " --job-hca-pairs rail");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("expected rails or all"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace sar
