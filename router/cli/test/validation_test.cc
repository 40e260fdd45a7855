// sar-route's commands give the routing pass's one verdict: the real binary (path in
// SAR_ROUTE_BIN) on files written from the shared invalid table sets (eval), and on a fabric
// where min-hop routes close a dependency cycle (route, compare). Each must fail with exit 1 and
// ValidateRouting's own message, as the plugin's C API and sar-filterd's planner do.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "command_test_util.h"
#include "invalid_tables_test_util.h"
#include "sar/io/guid2lid.h"
#include "sar/io/layers_file.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/model/failures.h"
#include "sar/pass/routing_pass.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using testcmd::Outcome;

class SarRouteCli : public testcmd::ScratchTest {
 protected:
  SarRouteCli() : ScratchTest("sar_route_cli_test") {}

  // Writes the fabric's topology and LIDs; returns the common fabric arguments.
  std::string WriteFabric(const Fabric& f) {
    EXPECT_TRUE(WriteTopology(Path("f.topo"), f, {}).ok());
    EXPECT_TRUE(WriteGuid2Lid(Path("f.lids"), f).ok());
    return " -t " + Path("f.topo") + " --lids " + Path("f.lids");
  }

  Outcome SarRoute(const std::string& args) { return RunIn(SAR_ROUTE_BIN, args); }
};

TEST_F(SarRouteCli, EvalRefusesEachInvalidSetWithThePassMessage) {
  const Fabric f = invalidtables::Triangle();
  const std::string fabric = WriteFabric(f);
  ASSERT_TRUE(WriteLftDump(Path("valid.lfts"), f, invalidtables::Valid(f)).ok());
  ASSERT_TRUE(WriteVirtualLayers(Path("none.layers"), VirtualLayers()).ok());
  Outcome ok = SarRoute("eval" + fabric + " --lfts " + Path("valid.lfts") + " --layers " +
                        Path("none.layers"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  for (const invalidtables::Case& c : invalidtables::InvalidCases(f)) {
    ASSERT_TRUE(WriteLftDump(Path("bad.lfts"), f, c.lfts).ok());
    ASSERT_TRUE(WriteVirtualLayers(Path("bad.layers"), c.layers).ok());
    const Outcome r = SarRoute("eval" + fabric + " --lfts " + Path("bad.lfts") + " --layers " +
                               Path("bad.layers") + " --vls " + std::to_string(c.num_vls));
    EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.err;
    EXPECT_EQ(r.err, "sar-route: failed: " + c.message + "\n") << c.name;
  }
}

// Min-hop on a six-switch ring without layers, with one lane (so the pass cannot layer the
// tables): every route arrives, but the one layer's channel dependencies form a cycle. `route`
// writes nothing; `compare` marks the engine invalid; both say what the routing pass says
// in-process on the same files.
TEST_F(SarRouteCli, RouteAndCompareRefuseACyclicLayerWithThePassMessage) {
  const Fabric ring = testfab::Ring(6, 2);
  const std::string fabric = WriteFabric(ring);
  Fabric f;
  ASSERT_TRUE(ReadTopology(Path("f.topo"), &f).ok());
  std::vector<Guid2LidEntry> lids;
  ASSERT_TRUE(ReadGuid2Lid(Path("f.lids"), &lids).ok());
  f.ClearLids();
  ASSERT_TRUE(ApplyGuid2Lid(lids, &f).ok());
  RoutingOptions o;
  o.engine = "minhop";
  o.num_vls = 1;
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  RoutingOutput out;
  ValidationReport report;
  const Status want = RunRoutingPass(in, &out, &report);
  ASSERT_EQ(want.code(), Status::Code::kFailed) << want.ToString();
  ASSERT_NE(want.message().find("cyclic channel dependency"), std::string::npos);

  const Outcome r = SarRoute("route -e minhop --vls 1" + fabric + " -o " + Path("ring.lfts"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), "sar-route: " + want.ToString() + "\n");
  EXPECT_EQ(access(Path("ring.lfts").c_str(), F_OK), -1) << "route wrote invalid tables";

  std::ofstream(Path("jobs")) << "h0000 1\nh0005 1\n";
  const Outcome c = SarRoute("compare -e minhop --vls 1 --json --jobs " + Path("jobs") + fabric);
  EXPECT_EQ(c.exit_code, 1) << c.err;
  const nlohmann::json j = nlohmann::json::parse(c.out);
  EXPECT_EQ(j["engines"][0]["valid"], false);
  EXPECT_EQ(j["engines"][0]["invalid"], want.message());
}

TEST_F(SarRouteCli, RouteNamesOnlyTheMissingOption) {
  const std::string fabric = WriteFabric(invalidtables::Triangle());
  const Outcome no_out = SarRoute("route -e minhop" + fabric);
  EXPECT_EQ(no_out.exit_code, 2);
  EXPECT_NE(no_out.err.find("route needs -o FILE"), std::string::npos) << no_out.err;
  const Outcome no_topo = SarRoute("route -e minhop -o " + Path("x.lfts"));
  EXPECT_EQ(no_topo.exit_code, 2);
  EXPECT_NE(no_topo.err.find("route needs --topology FILE"), std::string::npos) << no_topo.err;
}

// The compact LFT form end to end: route writes it, diff-lfts finds it equal to the OpenSM
// text form of the same tables, eval reads it as valid tables, and a corrupted copy is refused
// with file:line.
TEST_F(SarRouteCli, CompactLftFormRoundTripsThroughTheCommands) {
  const std::string fabric = WriteFabric(testfab::FatTree2(6, 3, 4, 1));
  const Outcome text = SarRoute("route -e dmodc" + fabric + " -o " + Path("t.lfts"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const Outcome compact =
      SarRoute("route -e dmodc --out-format compact" + fabric + " -o " + Path("c.lfts"));
  ASSERT_EQ(compact.exit_code, 0) << compact.err;
  std::ifstream in(Path("c.lfts"));
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, "sar-lfts-compact 1");
  const Outcome diff = SarRoute("diff-lfts" + fabric + " " + Path("t.lfts") + " " + Path("c.lfts"));
  EXPECT_EQ(diff.exit_code, 0) << diff.out << diff.err;
  const Outcome eval = SarRoute("eval" + fabric + " -l " + Path("c.lfts"));
  EXPECT_EQ(eval.exit_code, 0) << eval.err;
  std::ofstream(Path("bad.lfts")) << "sar-lfts-compact 1\nswitch 0x1\n";
  const Outcome bad = SarRoute("eval" + fabric + " -l " + Path("bad.lfts"));
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find(Path("bad.lfts") + ":2:"), std::string::npos) << bad.err;
}

// route and compare use the OpenSM plugin's canonical node order by default: the same subnet
// described in another node order gives the same tables (--file-order keeps the file's order);
// compare and eval report the lower bound and each routing's gap to it, and SAR's refinement
// never ends above the plain SSSP result.
TEST_F(SarRouteCli, CanonicalOrderByDefaultAndTheBoundReported) {
  ASSERT_EQ(SarRoute("gen -f ft2:8,6 --style ibnetdiscover -o " + Path("a.topo")).exit_code, 0);
  ASSERT_EQ(
      SarRoute("jobmix -t " + Path("a.topo") + " --run-length 2 --max-size 16 -o " + Path("jobs"))
          .exit_code,
      0);
  // The same file with its node blocks in reverse order (every GUID and LID is in the file).
  std::string text = testcmd::Slurp(Path("a.topo"));
  std::vector<std::string> blocks;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find("\n\n", at);
    blocks.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? text.size() : end + 2;
  }
  ASSERT_GT(blocks.size(), 10u);
  std::string reversed = blocks[0];
  for (size_t i = blocks.size(); i-- > 1;) {
    if (blocks[i].find_first_not_of("\n") != std::string::npos) reversed += "\n\n" + blocks[i];
  }
  std::ofstream(Path("b.topo")) << reversed << "\n";
  const std::string jobs = " -j " + Path("jobs");
  ASSERT_EQ(
      SarRoute("route -e sar -t " + Path("a.topo") + jobs + " -o " + Path("a.lfts")).exit_code, 0);
  ASSERT_EQ(
      SarRoute("route -e sar -t " + Path("b.topo") + jobs + " -o " + Path("b.lfts")).exit_code, 0);
  ASSERT_EQ(
      SarRoute("route -e sar --file-order -t " + Path("b.topo") + jobs + " -o " + Path("c.lfts"))
          .exit_code,
      0);
  EXPECT_EQ(testcmd::Slurp(Path("a.lfts")), testcmd::Slurp(Path("b.lfts")));

  const Outcome cmp = SarRoute("compare --json -e sar,dfsssp -t " + Path("b.topo") + jobs);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json j = nlohmann::json::parse(cmp.out);
  const uint64_t bound = j["effective_efi_lower_bound"];
  EXPECT_GT(bound, 0u);
  EXPECT_EQ(j["lower_bound"]["value"], bound);
  for (const auto& row : j["engines"]) {
    EXPECT_GE(row["effective_efi_max"].get<uint64_t>(), bound) << row["engine"];
    EXPECT_GE(row["bound_gap"].get<double>(), 0.0);
  }
  const Outcome plain =
      SarRoute("compare --json -e sar --no-sar-refine -t " + Path("b.topo") + jobs);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_GE(nlohmann::json::parse(plain.out)["engines"][0]["effective_efi_max"].get<uint64_t>(),
            j["engines"][0]["effective_efi_max"].get<uint64_t>());

  const Outcome ev =
      SarRoute("eval --json -t " + Path("a.topo") + " --lfts " + Path("c.lfts") + jobs);
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  const nlohmann::json e = nlohmann::json::parse(ev.out);
  EXPECT_EQ(e["lower_bound"]["value"], bound);
  EXPECT_GE(e["bound_gap"].get<double>(), 0.0);
}

// compare --allow-disconnected: an up*/down* engine leaves the pairs without a legal route as
// holes and the JSON counts them (bench/dmodc_quality.py's unreachable share); without the flag
// the same engine refuses the fabric.
TEST_F(SarRouteCli, CompareAllowDisconnectedCountsUnreachablePairs) {
  // leaf00 keeps only spine00, leaf01 only spine01: cabled through leaf02, no up-down path.
  const Fabric intact = testfab::FatTree2(3, 2, 2);
  FailureSet fs;
  const NodeId leaf0 = intact.FindByName("leaf00"), leaf1 = intact.FindByName("leaf01");
  for (int p = 1; p <= intact.num_ports(leaf0); ++p) {
    if (intact.peer({leaf0, p}).node == intact.FindByName("spine01"))
      fs.links.push_back({"leaf00", p});
    if (intact.peer({leaf1, p}).node == intact.FindByName("spine00"))
      fs.links.push_back({"leaf01", p});
  }
  ASSERT_EQ(fs.links.size(), 2u);
  Fabric f;
  ASSERT_TRUE(ApplyFailures(intact, fs, &f).ok());
  const std::string fabric = WriteFabric(f);
  std::ofstream(Path("jobs")) << "h0000 1\nh0002 1\n";

  const Outcome strict = SarRoute("compare -e dmodc --json --jobs " + Path("jobs") + fabric);
  EXPECT_EQ(strict.exit_code, 1) << strict.err;
  const nlohmann::json s = nlohmann::json::parse(strict.out);
  EXPECT_EQ(s["engines"][0]["ok"], false);
  EXPECT_NE(s["engines"][0]["error"].get<std::string>().find("no up-down path"), std::string::npos);

  const Outcome c = SarRoute("compare -e dmodc,dfsssp --allow-disconnected --json --jobs " +
                             Path("jobs") + fabric);
  EXPECT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json j = nlohmann::json::parse(c.out);
  const nlohmann::json& dmodc = j["engines"][0];
  EXPECT_EQ(dmodc["valid"], true);
  EXPECT_EQ(dmodc["pairs"], 6 * 5);
  EXPECT_EQ(dmodc["unreachable_pairs"], 8);  // 2 hosts x 2 hosts, both ways
  EXPECT_EQ(dmodc["loops"], 0);
  const nlohmann::json& dfsssp = j["engines"][1];  // shortest paths, down and up: all delivered
  EXPECT_EQ(dfsssp["engine"], "dfsssp");
  EXPECT_EQ(dfsssp["unreachable_pairs"], 0);
}

// osrm2 sends each source to its group's LID: `eval --source-lids osrm2` on the tables `route`
// wrote gives `compare`'s figures for osrm2 (which follow the groups), and the base-LID reading
// of the same tables is worse (Yuan's FT(8,2): ratio sqrt(8/2) = 2 only with the groups' LIDs).
TEST_F(SarRouteCli, EvalFollowsOsrmSourceGroupsAsCompareDoes) {
  const std::string topo = " -t " + Path("f.topo");
  ASSERT_EQ(SarRoute("gen -f ft2:4,8 --lmc 1 -o " + Path("f.topo")).exit_code, 0);
  ASSERT_EQ(
      SarRoute("jobmix" + topo + " --run-length 2 --max-size 12 -o " + Path("jobs")).exit_code, 0);
  const std::string jobs = " -j " + Path("jobs");
  const Outcome route = SarRoute("route -e osrm2" + topo + " -o " + Path("o.lfts"));
  ASSERT_EQ(route.exit_code, 0) << route.err;
  const Outcome cmp = SarRoute("compare --json -e osrm2" + topo + jobs);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json c = nlohmann::json::parse(cmp.out)["engines"][0];
  EXPECT_FALSE(c.contains("efi_on_base_lids"));
  const Outcome text = SarRoute("compare -e osrm2" + topo + jobs);
  EXPECT_EQ(text.out.find("base LIDs"), std::string::npos) << text.out;

  const std::string eval =
      "eval --json --traffic all-to-all" + topo + jobs + " -l " + Path("o.lfts");
  const Outcome grouped = SarRoute(eval + " --source-lids osrm2");
  ASSERT_EQ(grouped.exit_code, 0) << grouped.err;
  const nlohmann::json e = nlohmann::json::parse(grouped.out);
  EXPECT_EQ(e["source_lids"], "osrm2");
  EXPECT_EQ(e["oblivious_ratio"], 2);
  EXPECT_EQ(e["oblivious_ratio"], c["oblivious_ratio"]);
  EXPECT_EQ(e["efi"]["max"], c["efi_max"]);
  EXPECT_EQ(e["effective_efi"]["max"], c["effective_efi_max"]);
  EXPECT_EQ(e["effective_efi"]["mean"], c["effective_efi_mean"]);
  EXPECT_EQ(e["dark_fiber"], c["dark_fiber"]);
  double sum = 0;
  int multi = 0;
  for (const auto& jm : e["jobs"]) {
    if (jm["leaf_switches"].get<int>() < 2) continue;
    sum += jm["efi_max"].get<double>();
    ++multi;
  }
  ASSERT_GT(multi, 0);
  EXPECT_DOUBLE_EQ(sum / multi, c["mean_job_efi_max"].get<double>());

  const Outcome base = SarRoute(eval);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  const nlohmann::json b = nlohmann::json::parse(base.out);
  EXPECT_EQ(b["source_lids"], nullptr);
  EXPECT_GT(b["oblivious_ratio"].get<int>(), 2);
  EXPECT_GT(b["traffic"][0]["max_load"].get<uint64_t>(),
            e["traffic"][0]["max_load"].get<uint64_t>());

  const Outcome unknown = SarRoute(eval + " --source-lids nosuch");
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("--source-lids: unknown engine 'nosuch'"), std::string::npos)
      << unknown.err;
}

// What jobs feel, as eval and compare show it: the same tables give every job the same figures
// in both; eval compares with a baseline's tables job by job; a job none of whose hosts is in
// the fabric is listed with no flows (and its host named on stderr), never dropped.
TEST_F(SarRouteCli, EvalAndCompareGiveEveryJobTheSameThroughput) {
  const std::string topo = " -t " + Path("f.topo");
  ASSERT_EQ(SarRoute("gen -f ft2:4,8 --fail-links 2 --seed 2 -o " + Path("f.topo")).exit_code, 0);
  ASSERT_EQ(
      SarRoute("jobmix" + topo + " --run-length 2 --max-size 12 -o " + Path("jobs")).exit_code, 0);
  {
    std::ofstream add(Path("jobs"), std::ios::app);
    add << "nohost ghost\n";
  }
  const std::string jobs = " -j " + Path("jobs");
  ASSERT_EQ(SarRoute("route -e dfsssp" + topo + jobs + " -o " + Path("d.lfts")).exit_code, 0);
  ASSERT_EQ(SarRoute("route -e minhop" + topo + jobs + " -o " + Path("m.lfts")).exit_code, 0);
  const Outcome cmp = SarRoute("compare --json -e dfsssp,minhop --baseline minhop" + topo + jobs);
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const nlohmann::json c = nlohmann::json::parse(cmp.out);
  EXPECT_EQ(c["baseline"], "minhop");
  const Outcome ev = SarRoute("eval --json" + topo + jobs + " -l " + Path("d.lfts") +
                              " --baseline-lfts " + Path("m.lfts") + " --baseline-name minhop");
  ASSERT_EQ(ev.exit_code, 0) << ev.err;
  EXPECT_NE(ev.err.find("nohost"), std::string::npos) << ev.err;
  const nlohmann::json e = nlohmann::json::parse(ev.out)["flows"];
  const nlohmann::json& row = c["engines"][0]["flows"];
  ASSERT_EQ(e["jobs"].size(), row["jobs"].size());
  bool ghost = false;
  int multi = 0;
  for (size_t i = 0; i < e["jobs"].size(); ++i) {
    const nlohmann::json& a = e["jobs"][i];
    const nlohmann::json& b = row["jobs"][i];
    ASSERT_EQ(a["id"], b["id"]);
    EXPECT_EQ(a["flows"], b["flows"]);
    if (a["id"] == "ghost") {
      ghost = true;
      EXPECT_EQ(a["endpoints"], 0);
      EXPECT_EQ(a["flows"], 0);
      continue;
    }
    if (a["flows"].get<uint64_t>() == 0) continue;
    multi += a["leaf_switches"].get<int>() > 1;
    EXPECT_NEAR(a["time"].get<double>(), b["time"].get<double>(), 1e-9) << a["id"];
    EXPECT_NEAR(a["speedup_vs_baseline"].get<double>(), b["speedup_vs_baseline"].get<double>(),
                1e-9)
        << a["id"];
  }
  EXPECT_TRUE(ghost);
  EXPECT_GT(multi, 0);
  for (const char* k : {"faster", "equal", "slower", "slower_over_2pct"}) {
    EXPECT_EQ(e["vs_baseline"][k], row["vs_baseline"][k]) << k;
  }
  // The minhop row against itself: every job equal.
  const nlohmann::json& self = c["engines"][1]["flows"]["vs_baseline"];
  EXPECT_EQ(self["equal"], self["jobs"]);
  const Outcome text = SarRoute("eval" + topo + jobs + " -l " + Path("d.lfts"));
  EXPECT_NE(text.out.find("no flows: no host of this job is in the fabric"), std::string::npos)
      << text.out;
}

// --sl-out whose layers are too large to list (a fabric of ~8k hosts or more has a line per LID
// pair; here a tiny limit stands in): the tables are still written, the layers file is not, and
// the exit code and message say so.
TEST_F(SarRouteCli, LayersTooLargeToListStillWriteTheTables) {
  const std::string topo = " -t " + Path("f.topo");
  ASSERT_EQ(SarRoute("gen -f ft2:4,4 -o " + Path("f.topo")).exit_code, 0);
  ASSERT_EQ(SarRoute("route -e dfsssp" + topo + " -o " + Path("plain.lfts")).exit_code, 0);
  const Outcome big = SarRoute("route -e dfsssp" + topo + " -o " + Path("big.lfts") + " --sl-out " +
                               Path("big.layers") + " --sl-out-limit 100");
  EXPECT_EQ(big.exit_code, 4) << big.err;
  EXPECT_NE(big.err.find("--sl-out " + Path("big.layers") + " not written"), std::string::npos)
      << big.err;
  EXPECT_NE(big.err.find("the tables are written to " + Path("big.lfts")), std::string::npos)
      << big.err;
  EXPECT_EQ(testcmd::Slurp(Path("big.lfts")), testcmd::Slurp(Path("plain.lfts")));
  EXPECT_NE(::access(Path("big.layers").c_str(), F_OK), 0);
  const Outcome ok = SarRoute("route -e dfsssp" + topo + " -o " + Path("ok.lfts") + " --sl-out " +
                              Path("ok.layers"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(::access(Path("ok.layers").c_str(), F_OK), 0);
}

// route --previous-jobs reaches the pass: a job ends, the others keep running, and the stable
// delta keeps every running job's entries (the note counts them) and changes none of the
// tables; without --previous it is a usage error.
TEST_F(SarRouteCli, PreviousJobsKeepRunningJobsAndNeedPrevious) {
  ASSERT_EQ(SarRoute("gen -f ft2:8,6 --style ibnetdiscover -o " + Path("a.topo")).exit_code, 0);
  ASSERT_EQ(
      SarRoute("jobmix -t " + Path("a.topo") + " --run-length 2 --max-size 16 -o " + Path("jobs"))
          .exit_code,
      0);
  // The same mapping without its last job.
  std::istringstream all(testcmd::Slurp(Path("jobs")));
  std::vector<std::string> lines;
  for (std::string line; std::getline(all, line);) lines.push_back(line);
  std::string last_job = lines.back().substr(lines.back().find(' ') + 1);
  std::ofstream after(Path("jobs.after"));
  int running = 0;
  for (const std::string& line : lines) {
    if (line.substr(line.find(' ') + 1) != last_job) after << line << "\n";
  }
  after.close();
  for (const std::string& line : lines) {
    if (line[0] != '#' && line.substr(line.find(' ') + 1) != last_job) ++running;
  }
  ASSERT_GT(running, 0);
  const std::string topo = " -t " + Path("a.topo");
  ASSERT_EQ(
      SarRoute("route -e sar" + topo + " -j " + Path("jobs") + " -o " + Path("a.lfts")).exit_code,
      0);
  const Outcome stable =
      SarRoute("route -e sar" + topo + " -j " + Path("jobs.after") + " --previous " +
               Path("a.lfts") + " --previous-jobs " + Path("jobs") + " -o " + Path("b.lfts"));
  ASSERT_EQ(stable.exit_code, 0) << stable.err;
  EXPECT_NE(stable.err.find("stability: "), std::string::npos) << stable.err;
  EXPECT_NE(stable.err.find(" 0 of their "), std::string::npos) << stable.err;
  const Outcome plain = SarRoute("route -e sar" + topo + " -j " + Path("jobs.after") +
                                 " --previous " + Path("a.lfts") + " -o " + Path("c.lfts"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find("stability: "), std::string::npos) << plain.err;
  const Outcome alone = SarRoute("route -e sar" + topo + " -j " + Path("jobs.after") +
                                 " --previous-jobs " + Path("jobs") + " -o " + Path("d.lfts"));
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--previous-jobs needs --previous"), std::string::npos) << alone.err;
}

}  // namespace
}  // namespace sar
