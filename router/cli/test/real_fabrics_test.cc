// sar-route on the public ibnetdiscover dumps of shared/data/fabrics/ (beside the source tree,
// never copied into it; each test skips when its dump is absent): every dump loads with what its
// README says it holds, and sar, dfsssp, dmodc, updn and minhop route it to tables eval judges
// valid and deadlock-free (switch LIDs counted) in the layers written down per dump, or refuse
// it as written down. One CTest per dump (RealFabric/Dumps.*); compare --opensm on each is
// tests/integration/test_real_fabrics_opensm.py. No dump has unreachable parts, so nothing here
// needs
// --allow-disconnected: eval must find every pair reachable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>

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

// What an engine does with a dump: its tables are deadlock-free in this many virtual layers
// (1: as routed; more: the layers dfsssp and sar need, or those the routing pass gives a
// layer-less engine whose one layer is cyclic only through switch-LID routes), or 0: the engine
// refuses the dump and writes nothing (minhop: a dependency cycle between CAs; dmodc: no up-down
// path, so not a fat-tree).
struct Dump {
  const char* name;  // the test's name
  const char* file;
  int switches, cas, cabled_ca_ports;
  // Node classes (docs/formats.md): distinct hosts, CAs named by node GUID (description
  // "MT<digits> ..."), SHARP Aggregation Nodes; counted from the files by hand (grep).
  int hosts, nameless, aggregation_nodes;
  // Layers (see above), switch LIDs counted, 8 VLs. sar routes `jobmix --seed 1 --run-length 3
  // --max-size 16` (fragmented jobs, so many span leaves).
  int dfsssp, sar, dmodc, updn, minhop;
  bool sar_differs;  // the job mix has multi-switch jobs, so sar's tables differ from dfsssp's
};

// Per dump, from shared/data/fabrics/README.md and the files themselves.
const Dump kDumps[] = {
    // 160 dual-port HCAs, each shown as two one-port CAs with consecutive node GUIDs.
    // One CA is nameless ("MT4123 ConnectX6"); 618 dual-port hosts' CAs share a name. Three
    // levels: min-hop routes between CAs are acyclic, but not once the switch LIDs count (the
    // default check), so minhop, updn and dmodc get 4 layers from the routing pass.
    {"selene_storage", "selene-storage.ibnetdiscover", 160, 1247, 1247, 629, 1, 0, 4, 4, 4, 4, 4,
     true},
    // 542 HCAs and a SHARP Aggregation Node CA on each of the 40 switches. Some leaf pairs share
    // no spine, so some min-hop paths go leaf-spine-leaf-spine-leaf: a dependency cycle that
    // minhop cannot route (dfsssp breaks it with layers), and no up-down path for dmodc.
    // 69 nameless HCAs (description "MT4129 ConnectX7 ..."); a DGX's HCAs share its name.
    {"nvidia_ndr_superpod", "nvidia-ndr-superpod.ibnetdiscover", 40, 582, 582, 191, 69, 40, 2, 3, 0,
     1, 0, true},
    // Hosts on a spine (not a fat-tree: dmodc refuses); a storage host with both ports on one
    // switch.
    {"loginoff_stage", "loginoff-stage.ibnetdiscover", 8, 144, 145, 144, 0, 0, 1, 1, 0, 1, 1, true},
    // Self-loop cables on a switch; dual-port HCAs with consecutive node GUIDs.
    // One Aggregation Node; hosts with several HCAs. Two switches side by side: no tree.
    {"nvidia_lab_small", "nvidia-lab-small.ibnetdiscover", 2, 13, 13, 5, 0, 1, 1, 1, 0, 1, 1,
     false},
    // A 1xSDR cable parallel to a 4xSDR one; lmc 1.
    // Every CA "MT23108 InfiniHost ...": named by node GUID.
    {"ibtopotool_1", "ibtopotool-example-1.ibnetdiscover", 2, 4, 5, 4, 4, 0, 1, 1, 0, 1, 1, false},
    {"ibtopotool_2", "ibtopotool-example-2.ibnetdiscover", 1, 2, 2, 2, 0, 0, 1, 1, 1, 1, 1, false},
    // First line: ibnetdiscover's stderr (skipped with a warning); self-loops.
    {"ibtopotool_3", "ibtopotool-example-3.ibnetdiscover", 2, 6, 6, 5, 0, 0, 1, 1, 0, 1, 1, false},
    // An HCA cabled only on port 2.
    {"ibtopotool_4", "ibtopotool-example-4.ibnetdiscover", 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, false},
};

// gtest's name for a parameter in listings and failures: the dump's file.
void PrintTo(const Dump& d, std::ostream* os) { *os << d.file; }

class RealFabric : public RealFabrics, public ::testing::WithParamInterface<Dump> {};

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

// The layers a route's notes say the tables need: "N needed for deadlock freedom" (dfsssp, sar)
// or "N layers make them deadlock-free" (the routing pass layering a layer-less engine); 1 when
// neither is said.
int LayersNeeded(const std::string& err) {
  std::smatch m;
  if (std::regex_search(err, m, std::regex("([0-9]+) needed for deadlock freedom")) ||
      std::regex_search(err, m, std::regex("([0-9]+) layers make them deadlock-free"))) {
    return std::stoi(m[1]);
  }
  return 1;
}

// One dump (a CTest of its own): info's counts and classes; every engine routes it to tables
// eval judges valid and deadlock-free with switch LIDs counted, in the layers written down, or
// refuses it as written down.
TEST_P(RealFabric, LoadsRoutesAndValidates) {
  const Dump& d = GetParam();
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

  const std::string jobs = Path("mix.map");
  const Outcome mix =
      SarRoute("jobmix" + topo + " --seed 1 --run-length 3 --max-size 16 -o " + jobs);
  ASSERT_EQ(mix.exit_code, 0) << mix.err;
  const std::pair<const char*, int> engines[] = {{"dfsssp", d.dfsssp},
                                                 {"sar", d.sar},
                                                 {"dmodc", d.dmodc},
                                                 {"updn", d.updn},
                                                 {"minhop", d.minhop}};
  for (const auto& [engine, layers] : engines) {
    SCOPED_TRACE(engine);
    const std::string e = engine;
    const std::string lfts = Path(e + ".lfts"), sl = Path(e + ".layers");
    const std::string with_jobs = e == "sar" ? " --jobs " + jobs : "";
    const Outcome r =
        SarRoute("route -e " + e + topo + with_jobs + " -o " + lfts + " --sl-out " + sl);
    if (layers == 0) {
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_NE(r.err.find(e == "dmodc" ? "no up-down path" : "cyclic channel dependency"),
                std::string::npos)
          << r.err;
      EXPECT_NE(::access(lfts.c_str(), F_OK), 0) << "route wrote invalid tables";
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(LayersNeeded(r.err), layers) << r.err;
    const Outcome v = SarRoute("eval --json --no-flows" + topo + with_jobs + " --lfts " + lfts +
                               " --layers " + sl);
    ASSERT_EQ(v.exit_code, 0) << v.err;
    const nlohmann::json ev = nlohmann::json::parse(v.out);
    EXPECT_EQ(ev["valid"], true) << ev["invalid"];
    EXPECT_EQ(ev["unreachable_pairs"], 0);
    EXPECT_EQ(ev["loops"], 0);
    EXPECT_EQ(ev["deadlock_switch_lids"], true);
    EXPECT_EQ(ev["deadlock_free"], true);
    // One layer suffices exactly when the engine needed no more.
    EXPECT_EQ(ev["single_layer_deadlock_free"], layers == 1);
    EXPECT_EQ(ev["pairs"], TracedPairs(path));
  }
  EXPECT_EQ(testcmd::Slurp(Path("sar.lfts")) != testcmd::Slurp(Path("dfsssp.lfts")), d.sar_differs);
}

INSTANTIATE_TEST_SUITE_P(Dumps, RealFabric, ::testing::ValuesIn(kDumps),
                         [](const ::testing::TestParamInfo<Dump>& info) {
                           return std::string(info.param.name);
                         });

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
