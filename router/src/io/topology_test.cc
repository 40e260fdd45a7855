#include "sar/io/topology.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "sar/io/file_util.h"
#include "sar/io/guid2lid.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using io::testing::CompareOptions;
using io::testing::DiffFabrics;
using io::testing::RealFabricPath;
using io::testing::TestDataPath;

Fabric Read(const std::string& name) {
  Fabric f;
  const Status s = ReadTopology(TestDataPath(name), &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return f;
}

Fabric ParseOk(const std::string& text) {
  Fabric f;
  const Status s = ParseTopology(text, "t.topo", &f);
  EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << text;
  return f;
}

// The ibsim sample's GUIDs, as ibsim assigned them: the live capture of the same file shows
// switches at 0x2c90000100000 +0,+1,+2 and HCAs at 0x2c90000200000 +0,+2,+4 (ports +1).
TEST(TopologyTest, IbsimFileGetsIbsimGuidsAndDescriptions) {
  const Fabric f = Read("small.topo");
  ASSERT_EQ(f.num_nodes(), 6);
  EXPECT_EQ(f.num_switches(), 3);
  EXPECT_EQ(f.num_links(), 7);  // 3 HCA cables + 2x2 parallel leaf-spine cables
  const NodeId leaf02 = f.FindByName("leaf02");
  ASSERT_NE(leaf02, kNoNode);
  EXPECT_EQ(f.node_guid(leaf02), 0x2c90000100001u);
  const NodeId h0201 = f.FindByName("h0201");
  ASSERT_NE(h0201, kNoNode);
  EXPECT_EQ(f.node_guid(h0201), 0x2c90000200004u);
  EXPECT_EQ(f.port_guid({h0201, 1}), 0x2c90000200005u);
  EXPECT_EQ(f.description(h0201), "h0201 HCA-1");
  EXPECT_EQ(f.hostname(h0201), "h0201");
  // Parallel cables: leaf01 ports 7 and 8 both reach spine01.
  const NodeId leaf01 = f.FindByName("leaf01"), spine = f.FindByName("spine01");
  EXPECT_EQ(f.peer({leaf01, 7}), (PortRef{spine, 1}));
  EXPECT_EQ(f.peer({leaf01, 8}), (PortRef{spine, 2}));
  EXPECT_EQ(f.peer({spine, 2}), (PortRef{leaf01, 8}));
  EXPECT_EQ(f.max_lid(), 0u);  // an ibsim file carries "lid 0" only
}

TEST(TopologyTest, HcaWithoutCommentIsDescribedByItsName) {
  const Fabric f = Read("dual.topo");
  const NodeId single = f.FindByName("hsingle");
  ASSERT_NE(single, kNoNode);
  EXPECT_EQ(f.description(single), "hsingle");  // what ibsim reported live
  const NodeId dual = f.FindByName("hdual");
  EXPECT_EQ(f.num_ports(dual), 2);
  EXPECT_EQ(f.port_guid({dual, 2}), f.node_guid(dual) + 2);
}

// A live ibnetdiscover capture must describe the same fabric as the ibsim file it came from,
// and its LIDs must be the ones OpenSM stored in its guid2lid cache during the same run.
void ExpectLiveMatchesFile(const std::string& prefix, const std::string& ibsim_file) {
  SCOPED_TRACE(prefix);
  const Fabric live = Read(prefix + ".ibnetdiscover");
  Fabric file = Read(ibsim_file);
  EXPECT_EQ(DiffFabrics(file, live, {.lids = false}), "");
  std::vector<Guid2LidEntry> cache;
  ASSERT_TRUE(ReadGuid2Lid(TestDataPath(prefix + ".guid2lid"), &cache).ok());
  int skipped = -1;
  ASSERT_TRUE(ApplyGuid2Lid(cache, &file, &skipped).ok());
  EXPECT_EQ(skipped, 0);
  EXPECT_EQ(DiffFabrics(file, live), "");
}

TEST(TopologyTest, LiveCaptureMatchesIbsimFile) {
  ExpectLiveMatchesFile("small", "small.topo");
  ExpectLiveMatchesFile("small-lmc1", "small.topo");
  ExpectLiveMatchesFile("dual", "dual.topo");
}

TEST(TopologyTest, LiveCaptureNamesAndLmc) {
  const Fabric live = Read("small-lmc1.ibnetdiscover");
  const NodeId h = live.FindByName("H-0002c90000200004");
  ASSERT_NE(h, kNoNode);
  EXPECT_EQ(live.description(h), "h0201 HCA-1");
  EXPECT_EQ(live.base_lid({h, 1}), 10u);
  EXPECT_EQ(live.lmc({h, 1}), 1);
  EXPECT_EQ(live.lid_owner(11), (PortRef{h, 1}));
}

void ExpectRoundTrip(const Fabric& f, TopologyStyle style) {
  TopologyWriteOptions opt;
  opt.style = style;
  const std::string text = FormatTopology(f, opt);
  Fabric back;
  const Status s = ParseTopology(text, "written.topo", &back);
  ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << text;
  EXPECT_EQ(DiffFabrics(f, back), "") << text;
  EXPECT_EQ(back.num_switches(), f.num_switches());
}

TEST(TopologyTest, RoundTripsCapturedFabrics) {
  for (const char* name : {"small.ibnetdiscover", "small-lmc1.ibnetdiscover", "dual.ibnetdiscover",
                           "small.topo", "dual.topo"}) {
    SCOPED_TRACE(name);
    const Fabric f = Read(name);
    ExpectRoundTrip(f, TopologyStyle::kIbsim);
    ExpectRoundTrip(f, TopologyStyle::kIbnetdiscover);
  }
}

// GUIDs that ibsim's counter cannot produce in order (gaps, descending, HCAs with 3 ports), an
// uncabled HCA port, LMC 2 and switches without LIDs.
Fabric IrregularFabric() {
  Fabric f;
  const NodeId s1 = f.AddNode(NodeKind::kSwitch, 4, 0x500, "s1", "switch one");
  const NodeId s2 = f.AddNode(NodeKind::kSwitch, 4, 0x400, "s2", "switch two");
  const NodeId s3 = f.AddNode(NodeKind::kSwitch, 4, 0x401, "s3", "s3");
  const NodeId h1 = f.AddNode(NodeKind::kHca, 3, 0x9000, "h1", "h1 mlx5_0");
  const NodeId h2 = f.AddNode(NodeKind::kHca, 1, 0x9004, "h2", "h2 mlx5_0");  // 0x9000 + 3 + 1
  const NodeId h3 = f.AddNode(NodeKind::kHca, 1, 0x10, "h3", "h3 mlx5_0");
  EXPECT_TRUE(f.Connect({s1, 1}, {s2, 1}).ok());
  EXPECT_TRUE(f.Connect({s1, 2}, {s2, 2}).ok());
  EXPECT_TRUE(f.Connect({s2, 3}, {s3, 4}).ok());
  EXPECT_TRUE(f.Connect({h1, 1}, {s1, 3}).ok());
  EXPECT_TRUE(f.Connect({h1, 3}, {s3, 1}).ok());
  EXPECT_TRUE(f.Connect({h2, 1}, {s1, 4}).ok());
  EXPECT_TRUE(f.Connect({h3, 1}, {s3, 2}).ok());
  EXPECT_TRUE(f.SetLid({s1, 0}, 1, 0).ok());
  EXPECT_TRUE(f.SetLid({s2, 0}, 2, 0).ok());
  EXPECT_TRUE(f.SetLid({h1, 1}, 4, 2).ok());
  EXPECT_TRUE(f.SetLid({h1, 3}, 8, 1).ok());
  EXPECT_TRUE(f.SetLid({h3, 1}, 12, 0).ok());
  return f;
}

TEST(TopologyTest, RoundTripsIrregularGuids) {
  const Fabric f = IrregularFabric();
  ExpectRoundTrip(f, TopologyStyle::kIbsim);
  ExpectRoundTrip(f, TopologyStyle::kIbnetdiscover);
  // h2 follows h1 on the counter and s3 follows s2, so ibsim needs no reset line for them.
  TopologyWriteOptions opt;
  const std::string text = FormatTopology(f, opt);
  EXPECT_EQ(text.find("switchguid=0x0000000000000401"), std::string::npos) << text;
  EXPECT_EQ(text.find("caguid=0x0000000000009004"), std::string::npos) << text;
}

// A dual-port ConnectX as ibnetdiscover shows it: each port its own one-port CA, the second's
// node GUID the first's + 1, each port GUID equal to its node GUID. The default port GUID of
// the first (node GUID + 1) is the second's real one; in either order the file's GUIDs decide.
TEST(TopologyTest, DualPortHcaWithConsecutiveNodeGuids) {
  const std::string sw =
      "switchguid=0x100(100)\nSwitch 4 \"S-sw\" # \"sw\" enhanced port 0 lid 1 lmc 0\n"
      "[1] \"H-10\"[1](10) # \"host HCA-1\" lid 2 4xEDR\n"
      "[2] \"H-11\"[1](11) # \"host HCA-2\" lid 3 4xEDR\n\n";
  const std::string first =
      "caguid=0x10\nCa 1 \"H-10\" # \"host HCA-1\"\n[1](10) \"S-sw\"[1] # lid 2 lmc 0 \"sw\" "
      "lid 1 4xEDR\n\n";
  const std::string second =
      "caguid=0x11\nCa 1 \"H-11\" # \"host HCA-2\"\n[1](11) \"S-sw\"[2] # lid 3 lmc 0 \"sw\" "
      "lid 1 4xEDR\n\n";
  for (const std::string& text : {sw + first + second, sw + second + first}) {
    const Fabric f = ParseOk(text);
    const NodeId a = f.FindByName("H-10"), b = f.FindByName("H-11");
    ASSERT_NE(a, kNoNode);
    ASSERT_NE(b, kNoNode);
    EXPECT_EQ(f.port_guid({a, 1}), 0x10u);
    EXPECT_EQ(f.port_guid({b, 1}), 0x11u);
    EXPECT_EQ(f.FindByPortGuid(0x10), (PortRef{a, 1}));
    EXPECT_EQ(f.FindByPortGuid(0x11), (PortRef{b, 1}));
    EXPECT_EQ(f.Endpoints().size(), 2u);
    ExpectRoundTrip(f, TopologyStyle::kIbnetdiscover);
  }
  // The GUID on the switch's line is the file's word too when the CA's own line gives none.
  const std::string bare_second =
      "caguid=0x11\nCa 1 \"H-11\" # \"host HCA-2\"\n[1] \"S-sw\"[2] # lid 3 lmc 0\n";
  const Fabric f = ParseOk(sw + first + bare_second);
  EXPECT_EQ(f.FindByPortGuid(0x11), (PortRef{f.FindByName("H-11"), 1}));
}

TEST(TopologyTest, IbnetdiscoverStyleKeepsCustomPortGuids) {
  Fabric f;
  const NodeId s = f.AddNode(NodeKind::kSwitch, 2, 0x100, "s", "s");
  const NodeId h = f.AddNode(NodeKind::kHca, 2, 0x200, "h", "h");
  f.set_port_guid({h, 2}, 0x777);
  f.set_port_guid({s, 0}, 0x101);
  ASSERT_TRUE(f.Connect({s, 1}, {h, 2}).ok());
  ExpectRoundTrip(f, TopologyStyle::kIbnetdiscover);
}

TEST(TopologyTest, AcceptsUnquotedDescriptionsAndCommentsInRecords) {
  const Fabric f = ParseOk(
      "switchguid=0x10\n"
      "Switch 2 \"sw\" # big switch enhanced port 0 lid 3 lmc 0\n"
      "# a comment inside the record\n"
      "[1] \"h\"[1]\n"
      "\n"
      "caguid=0x20\n"
      "Hca 1 \"h\" # h mlx5_0\n"
      "[1] \"sw\"[1] # lid 7 lmc 0 \"sw\" lid 3 4xHDR\n");
  const NodeId sw = f.FindByName("sw"), h = f.FindByName("h");
  EXPECT_EQ(f.description(sw), "big switch");
  EXPECT_EQ(f.switch_lid(sw), 3u);
  EXPECT_EQ(f.description(h), "h mlx5_0");
  EXPECT_EQ(f.base_lid({h, 1}), 7u);
  EXPECT_EQ(f.node_guid(h), 0x20u);
}

// "lid 65535" is what a port reports before a subnet manager gave it a LID: no LID from the
// file (the deterministic assignment or a guid2lid gives one later), and a warning that says so.
TEST(TopologyTest, LidFfffIsUnassignedWithAWarning) {
  const std::string text =
      "switchguid=0x100(100)\n"
      "Switch 4 \"S-sw\" # \"sw\" enhanced port 0 lid 65535 lmc 0\n"
      "[1] \"H-10\"[1](11) # \"h1 HCA-1\" lid 65535 4xEDR\n"
      "[2] \"H-20\"[1](21) # \"h2 HCA-1\" lid 5 4xEDR\n"
      "\n"
      "caguid=0x10\n"
      "Ca 1 \"H-10\" # \"h1 HCA-1\"\n"
      "[1](11) \"S-sw\"[1] # lid 65535 lmc 0 \"sw\" lid 65535 4xEDR\n"
      "\n"
      "caguid=0x20\n"
      "Ca 1 \"H-20\" # \"h2 HCA-1\"\n"
      "[1](21) \"S-sw\"[2] # lid 5 lmc 0 \"sw\" lid 65535 4xEDR\n";
  Fabric f;
  std::vector<std::string> warnings;
  const Status s = ParseTopology(text, "fresh.topo", &f, &warnings);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(f.switch_lid(f.FindByName("S-sw")), 0u);
  EXPECT_EQ(f.base_lid({f.FindByName("H-10"), 1}), 0u);
  EXPECT_EQ(f.base_lid({f.FindByName("H-20"), 1}), 5u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "fresh.topo:2: 2 port(s) with LID 65535 (not yet assigned by a subnet manager); they "
            "have no LID from the file");
  // Any other LID beyond the unicast range is still refused.
  Fabric g;
  const std::string bad = "Switch 4 \"sw\" # \"sw\" enhanced port 0 lid 65534 lmc 0\n";
  EXPECT_EQ(ParseTopology(bad, "bad.topo", &g).code(), Status::Code::kCorruption);
}

// ibnetdiscover's stderr caught in the file (2>&1, or a terminal capture): its diagnostics are
// skipped with a warning naming the first; anything else unknown is still refused.
TEST(TopologyTest, SkipsIbnetdiscoverDiagnosticsWithAWarning) {
  const std::string records =
      "Switch 2 \"sw\"\n"
      "ibwarn: [12345] mad_rpc: _do_madrpc failed; dport (DR path slid 0; dlid 0; 0,1)\n"
      "[1] \"h\"[1]\n"
      "\n"
      "ibnetdiscover: iberror: failed: discover failed\n"
      "Hca 1 \"h\"\n"
      "[1] \"sw\"[1]\n";
  Fabric f;
  std::vector<std::string> warnings;
  const Status s = ParseTopology(
      "src/query_smp.c:195; umad (DR path slid 0; dlid 0; 0,1,1,31 Attr 0x11:0) bad status "
      "110; Connection timed out\n" +
          records,
      "t.topo", &f, &warnings);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(f.num_links(), 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].substr(0, 30), "t.topo:1: skipped 3 line(s) of");
  for (const char* bad : {"src/query_smp.c: no line number\n", "query.c:12 no semicolon\n",
                          "\"a b.c\":1; quoted\n", "warning: something\n"}) {
    Fabric g;
    const Status b = ParseTopology(bad + records, "t.topo", &g);
    EXPECT_EQ(b.code(), Status::Code::kCorruption) << bad;
    EXPECT_NE(b.message().find("t.topo:1: expected a Switch/Ca/Hca record"), std::string::npos)
        << b.message();
  }
}

// Damage a dump picks up on its way: CRLF line ends, tabs turned into spaces or lost (a
// terminal capture). Each still reads as the same fabric; damage that leaves a line ambiguous
// is refused at its line.
TEST(TopologyTest, ReadsCrlfAndLostTabs) {
  const std::string path = RealFabricPath("nvidia-lab-small.ibnetdiscover");
  SAR_SKIP_IF_NO_REAL_FABRIC(path);
  std::string text;
  ASSERT_TRUE(ReadFileToString(path, &text).ok());
  ASSERT_NE(text.find('\t'), std::string::npos);
  const Fabric original = ParseOk(text);
  std::string crlf, spaces, no_tabs;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
    spaces += c == '\t' ? ' ' : c;
    if (c != '\t') no_tabs += c;
  }
  for (const std::string* damaged : {&crlf, &spaces, &no_tabs}) {
    const Fabric f = ParseOk(*damaged);
    EXPECT_EQ(DiffFabrics(original, f), "");
    EXPECT_EQ(f.num_links(), 16);
  }
  // A port line whose brackets the capture broke: refused at that line, not skipped.
  std::string broken = no_tabs;
  const size_t at = broken.find("[23]\"H-ec0d9a03007d7d0a\"");
  ASSERT_NE(at, std::string::npos);
  broken[at + 3] = ' ';
  Fabric f;
  const Status s = ParseTopology(broken, "broken.topo", &f);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("broken.topo:12: expected '[<port>]'"), std::string::npos)
      << s.ToString();
}

// Every public dump of shared/data/fabrics/ reads, with what its README says it holds.
struct RealDump {
  const char* file;
  int switches, cas, cabled_ca_ports, cables;
};

TEST(TopologyTest, ReadsEveryPublicDump) {
  const RealDump dumps[] = {
      {"selene-storage.ibnetdiscover", 160, 1247, 1247, 3286},
      {"nvidia-ndr-superpod.ibnetdiscover", 40, 582, 582, 1114},  // 542 HCAs + 40 SHARP ANs
      {"loginoff-stage.ibnetdiscover", 8, 144, 145, 192},  // a storage host with both ports cabled
      {"nvidia-lab-small.ibnetdiscover", 2, 13, 13, 16},
      {"ibtopotool-example-1.ibnetdiscover", 2, 4, 5, 7},
      {"ibtopotool-example-2.ibnetdiscover", 1, 2, 2, 2},
      {"ibtopotool-example-3.ibnetdiscover", 2, 6, 6, 10},  // first line: ibnetdiscover's stderr
      {"ibtopotool-example-4.ibnetdiscover", 1, 1, 1, 1},
  };
  for (const RealDump& d : dumps) {
    SCOPED_TRACE(d.file);
    const std::string path = RealFabricPath(d.file);
    SAR_SKIP_IF_NO_REAL_FABRIC(path);
    Fabric f;
    std::vector<std::string> warnings;
    const Status s = ReadTopology(path, &f, &warnings);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(f.num_switches(), d.switches);
    EXPECT_EQ(static_cast<int>(f.hcas().size()), d.cas);
    EXPECT_EQ(static_cast<int>(f.Endpoints().size()), d.cabled_ca_ports);
    EXPECT_EQ(f.num_links(), d.cables);
    EXPECT_EQ(warnings.size(), std::string(d.file) == "ibtopotool-example-3.ibnetdiscover");
    // Every port in use is found by its GUID, and the file's LIDs are all there.
    EXPECT_TRUE(f.CheckPortGuids().ok()) << f.CheckPortGuids().ToString();
    for (const PortRef& e : f.Endpoints()) {
      ASSERT_EQ(f.FindByPortGuid(f.port_guid(e)), e) << f.name(e.node);
      ASSERT_NE(f.base_lid(e), 0u) << f.name(e.node);
    }
    ExpectRoundTrip(f, TopologyStyle::kIbnetdiscover);
  }
}

// selene-storage: 160 dual-port HCAs show as CA pairs with consecutive node GUIDs, each port's
// GUID its node GUID (the file's, not node GUID + 1); both ports of each are routable.
TEST(TopologyTest, SeleneDualPortHcasKeepTheFilesPortGuids) {
  const std::string path = RealFabricPath("selene-storage.ibnetdiscover");
  SAR_SKIP_IF_NO_REAL_FABRIC(path);
  Fabric f;
  ASSERT_TRUE(ReadTopology(path, &f).ok());
  int pairs = 0;
  for (NodeId h : f.hcas()) {
    const NodeId next = f.FindByNodeGuid(f.node_guid(h) + 1);
    if (next == kNoNode || f.is_switch(next)) continue;
    ++pairs;
    EXPECT_EQ(f.hostname(h), f.hostname(next));
    EXPECT_EQ(f.port_guid({h, 1}), f.node_guid(h));
    EXPECT_EQ(f.port_guid({next, 1}), f.node_guid(next));
    EXPECT_TRUE(f.peer({h, 1}).valid());
    EXPECT_TRUE(f.peer({next, 1}).valid());
  }
  EXPECT_EQ(pairs, 160);
  const NodeId a = f.FindByName("H-0c42a10300595394"), b = f.FindByName("H-0c42a10300595395");
  ASSERT_NE(a, kNoNode);
  ASSERT_NE(b, kNoNode);
  EXPECT_EQ(f.FindByPortGuid(0x0c42a10300595395), (PortRef{b, 1}));
  EXPECT_EQ(f.base_lid({a, 1}), 1351u);
  EXPECT_EQ(f.base_lid({b, 1}), 1353u);
}

TEST(TopologyTest, RejectsNonEmptyFabric) {
  Fabric f;
  f.AddNode(NodeKind::kSwitch, 1, 1, "x", "x");
  EXPECT_EQ(ParseTopology("", "t", &f).code(), Status::Code::kInvalidArgument);
}

// A failed ibnetdiscover leaves an empty file (or only comments): refused, never an empty fabric.
TEST(TopologyTest, RejectsTopologyWithoutNodes) {
  for (const char* text : {"", "\n\n", "# only a comment\n# vendid=0x2c9\n"}) {
    Fabric f;
    const Status s = ParseTopology(text, "empty.topo", &f);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << text;
    EXPECT_NE(s.message().find("empty.topo: no switch or HCA records"), std::string::npos)
        << s.ToString();
  }
}

struct BadCase {
  std::string what;
  std::string text;
  int line;
};

TEST(TopologyTest, MalformedInputNamesFileAndLine) {
  const std::string sw = "Switch 4 \"sw\"\n";
  const std::string ca = "\nHca 1 \"h\"\n[1] \"sw\"[1]\n";  // lines +1..+3
  const BadCase cases[] = {
      {"port line outside a record", "[1] \"sw\"[1]\n", 1},
      {"garbage line", "# ok\nfrobnicate\n", 2},
      {"port out of range", sw + "[5] \"h\"[1]\n" + ca, 2},
      {"port zero", sw + "[0] \"h\"[1]\n" + ca, 2},
      {"missing remote port", sw + "[1] \"h\"\n" + ca, 2},
      {"unterminated name", "Switch 4 \"sw\n", 1},
      {"no port count", "Switch \"sw\"\n", 1},
      {"too many ports", "Switch 255 \"sw\"\n", 1},
      {"text after the name", "Switch 4 \"sw\" junk\n", 1},
      {"listed on one end only", sw + "[1] \"h\"[1]\n\nHca 1 \"h\"\n", 2},
      {"ends disagree", sw + "[1] \"h\"[1]\n[2] \"h\"[1]\n" + ca, 3},
      {"unknown node", sw + "[1] \"nobody\"[1]\n", 2},
      {"remote port out of range", sw + "[1] \"h\"[2]\n" + ca, 2},
      {"duplicate port line", sw + "[1] \"h\"[1]\n[1] \"h\"[1]\n" + ca, 3},
      {"duplicate node name", sw + "\nSwitch 2 \"sw\"\n", 3},
      {"duplicate GUID", "switchguid=0x5\nSwitch 1 \"a\"\nswitchguid=0x5\nSwitch 1 \"b\"\n", 4},
      {"bad guid", "switchguid=0xZZ\n", 1},
      {"bad lid", sw + "[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"sw\"[1] # lid x\n", 5},
      {"LID clash",
       "Switch 2 \"sw\" # \"sw\" lid 3\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"sw\"[1] # lid 3 lmc 0\n",
       5},
      {"HCA to HCA", "Hca 1 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[1]\n", 2},
      {"remote port GUID mismatch", sw + "[1] \"h\"[1](1234)\n\nHca 1 \"h\"\n[1](5678) \"sw\"[1]\n",
       2},
      {"port GUID given twice",
       "Switch 4 \"sw\"\n[1] \"a\"[1]\n[2] \"b\"[1]\n\nHca 1 \"a\"\n[1](77) \"sw\"[1]\n\n"
       "Hca 1 \"b\"\n[1](77) \"sw\"[2]\n",
       9},
      {"default port GUID of a cabled port is another port's",
       "Switch 4 \"sw\"\n[1] \"a\"[1]\n[2] \"b\"[1]\n\ncaguid=0x10\nHca 1 \"a\"\n[1](12) "
       "\"sw\"[1]\n\ncaguid=0x11\nHca 1 \"b\"\n[1] \"sw\"[2]\n",
       11},
      {"reserved character in name", "Switch 2 \"a@b\"\n", 1},
      {"unterminated description", "Switch 2 \"sw\" # \"oops\n", 1},
      {"quote inside a description", "Switch 2 \"sw\" # big \"one\" lid 3\n", 1},
      {"control character in a name", std::string("Switch 2 \"s\0w\"\n", 14), 1},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    Fabric f;
    const Status s = ParseTopology(c.text, "bad.topo", &f);
    ASSERT_FALSE(s.ok()) << c.text;
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    if (std::getenv("SAR_PRINT_ERRORS")) std::printf("%s\n", s.message().c_str());
    EXPECT_NE(s.message().find("bad.topo:" + std::to_string(c.line) + ":"), std::string::npos)
        << s.message();
  }
}

// Real ibsim must accept what we write and report back the same fabric (LIDs included: ibsim
// takes port LIDs from the file). Skipped where ibsim is not installed.
bool Exists(const char* path) { return ::access(path, X_OK) == 0; }

TEST(TopologyTest, IbsimAcceptsWrittenFile) {
  if (!Exists("/usr/sbin/ibsim") && !Exists("/usr/bin/ibsim")) GTEST_SKIP() << "no ibsim";
  if (!Exists("/usr/bin/ibsim-run") && !Exists("/usr/sbin/ibsim-run")) GTEST_SKIP();
  for (const char* name : {"small-lmc1.ibnetdiscover", "dual.ibnetdiscover", "irregular"}) {
    SCOPED_TRACE(name);
    const Fabric f = std::string(name) == "irregular" ? IrregularFabric() : Read(name);
    const std::string dir = io::testing::MakeTempDir();
    ASSERT_TRUE(WriteTopology(dir + "/w.topo", f, {}).ok());
    const std::string sim_host = f.name(f.hcas().front());
    const std::string cmd = "cd " + dir + " && export IBSIM_SOCKNAME=sar-io-test-" +
                            std::to_string(::getpid()) + " SIM_HOST='" + sim_host +
                            "' && mkfifo ctl && "
                            "{ timeout 20 ibsim -s w.topo <>ctl >ibsim.out 2>&1 & p=$!; sleep 0.4; "
                            "timeout 10 ibsim-run ibnetdiscover >live.topo 2>ibnd.err; rc=$?; kill "
                            "$p; wait $p 2>/dev/null; "
                            "exit $rc; }";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Fabric live;
    const Status s = ReadTopology(dir + "/live.topo", &live);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(DiffFabrics(f, live), "");
  }
}

// Issue 20 item 1: on ConnectX HCAs the port GUID equals the node GUID, but ibsim simulates
// node GUID + port. WithIbsimPortGuids must give exactly the GUIDs the reader derives from our
// ibsim-style file (ibsim's own rule), with the LIDs kept.
TEST(TopologyTest, IbsimPortGuidsAreWhatTheIbsimFileMeans) {
  Fabric real = testfab::FatTree2(3, 2, 2);
  for (const PortRef& e : real.Endpoints()) real.set_port_guid(e, real.node_guid(e.node));
  const Fabric sim = WithIbsimPortGuids(real);
  const Fabric parsed = ParseOk(FormatTopology(real, TopologyWriteOptions()));
  int checked = 0;
  for (const PortRef& e : sim.Endpoints()) {
    EXPECT_NE(sim.port_guid(e), real.port_guid(e));
    const PortRef p = parsed.FindByPortGuid(sim.port_guid(e));
    ASSERT_TRUE(p.valid()) << GuidString(sim.port_guid(e));
    EXPECT_EQ(parsed.node_guid(p.node), sim.node_guid(e.node));
    EXPECT_EQ(sim.base_lid(e), real.base_lid(e));
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(real.Endpoints().size()));
}

// Link rates: read per port from both forms, a cable's rate is the lower of its two ends, and
// both writers keep them (ibsim trains its links to what the comment says).
TEST(TopologyTest, ReadsAndKeepsLinkRates) {
  const std::string text =
      "switchguid=0x10\n"
      "Switch 4 \"sw\" # \"sw\" enhanced port 0 lid 3 lmc 0\n"
      "[1] \"h\"[1] # \"h HCA-1\" lid 7 4xEDR\n"
      "[2] \"g\"[1] # \"g HCA-1\" lid 8 4xEDR\n"
      "[3] \"k\"[1] # \"k HCA-1\" lid 9 1xHDR\n"
      "\n"
      "caguid=0x20\n"
      "Hca 1 \"h\" # \"h HCA-1\"\n"
      "[1] \"sw\"[1] # lid 7 lmc 0 \"sw\" lid 3 4xEDR\n"
      "\n"
      "Hca 1 \"g\" # \"g HCA-1\"\n"
      "[1] \"sw\"[2] # lid 8 lmc 0 \"sw\" lid 3 4xDDR\n"
      "\n"
      "Hca 1 \"k\" # \"k HCA-1\"\n"
      "[1] \"sw\"[3] # lid 9 lmc 0 \"sw\" lid 3\n";
  const Fabric f = ParseOk(text);
  const NodeId sw = f.FindByName("sw"), g = f.FindByName("g"), k = f.FindByName("k");
  EXPECT_EQ(LinkRateString(f.port_rate(f.port_id(sw, 2))), "4xEDR");
  EXPECT_EQ(LinkRateString(f.port_rate(f.port_id(g, 1))), "4xDDR");
  // The lower of the two ends, in both directions; one declared end is enough.
  EXPECT_EQ(LinkRateString(f.link_rate(f.port_id(sw, 2))), "4xDDR");
  EXPECT_EQ(LinkRateString(f.link_rate(f.port_id(g, 1))), "4xDDR");
  EXPECT_EQ(LinkRateString(f.link_rate(f.port_id(k, 1))), "1xHDR");
  EXPECT_FALSE(f.port_rate(f.port_id(k, 1)).declared());
  EXPECT_EQ(LinkRateString(f.nominal_rate()), "4xEDR");
  const std::vector<uint32_t> cap = f.ChannelCapacities();
  EXPECT_EQ(cap[f.port_id(sw, 1)], 100000u);
  EXPECT_EQ(cap[f.port_id(sw, 2)], 16000u);
  EXPECT_EQ(cap[f.port_id(k, 1)], 50000u);

  for (TopologyStyle style : {TopologyStyle::kIbsim, TopologyStyle::kIbnetdiscover}) {
    TopologyWriteOptions opt;
    opt.style = style;
    const std::string out = FormatTopology(f, opt);
    Fabric back;
    ASSERT_TRUE(ParseTopology(out, "back.topo", &back).ok()) << out;
    EXPECT_EQ(out.find("4xHDR"), std::string::npos) << out;  // no made-up full rate
    for (PortId id = 0; id < f.num_port_slots(); ++id) {
      const PortRef p = f.port_ref(id);
      const NodeId n = back.FindByNodeGuid(f.node_guid(p.node));
      ASSERT_NE(n, kNoNode);
      EXPECT_EQ(back.link_rate(back.port_id(n, p.port)), f.link_rate(id))
          << f.name(p.node) << "[" << p.port << "] " << out;
    }
  }
}

TEST(TopologyTest, UndeclaredRatesAreAllEqual) {
  const Fabric f = Read("small.topo");
  // small.topo says 4xHDR on every port: all equal, like a fabric that declares nothing.
  const std::vector<uint32_t> cap = f.ChannelCapacities();
  for (PortId id = 0; id < f.num_port_slots(); ++id) EXPECT_EQ(cap[id], cap[0]);
  Fabric plain;
  ASSERT_TRUE(
      ParseTopology("Switch 1 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"s\"[1]\n", "p", &plain)
          .ok());
  EXPECT_FALSE(plain.nominal_rate().declared());
  for (uint32_t c : plain.ChannelCapacities()) EXPECT_EQ(c, 1u);
  // Written with the option's default where nothing is known.
  EXPECT_NE(FormatTopology(plain, TopologyWriteOptions()).find("4xHDR"), std::string::npos);
}

TEST(TopologyTest, RejectsGarbageLinkRatesWithFileAndLine) {
  for (const char* rate : {"4xFOO", "3xEDR", "4x", "12xedr", "400xEDR", "4xEDRR"}) {
    const std::string text = std::string("Switch 1 \"s\"\n[1] \"h\"[1] # \"h\" lid 2 ") + rate +
                             "\n\nHca 1 \"h\"\n[1] \"s\"[1]\n";
    Fabric f;
    const Status s = ParseTopology(text, "bad.topo", &f);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << rate;
    EXPECT_NE(s.message().find("bad.topo:2: expected a link rate such as '4xEDR'"),
              std::string::npos)
        << s.ToString();
    EXPECT_NE(s.message().find(rate), std::string::npos) << s.ToString();
  }
  // A rate-like word inside the quoted description is the description's business.
  Fabric f;
  EXPECT_TRUE(ParseTopology("Switch 1 \"s\"\n[1] \"h\"[1] # \"h 4xFOO\" lid 2 2xNDR\n\n"
                            "Hca 1 \"h\"\n[1] \"s\"[1]\n",
                            "ok.topo", &f)
                  .ok());
  EXPECT_EQ(LinkRateString(f.link_rate(0 + f.port_id(f.FindByName("s"), 1))), "2xNDR");
}

}  // namespace
}  // namespace sar
