#include "sar/io/lft_dump.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "sar/io/file_util.h"
#include "sar/io/topology.h"

namespace sar {
namespace {

using io::testing::TestDataPath;

Fabric ReadFabric(const std::string& name) {
  Fabric f;
  const Status s = ReadTopology(TestDataPath(name), &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return f;
}

LftSet ReadLfts(const std::string& name, const Fabric& f) {
  LftSet lfts;
  const Status s = ReadLftDump(TestDataPath(name), f, &lfts);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return lfts;
}

/// The text split into blocks, one per "Unicast lids" header, sorted (switch order may differ).
std::vector<std::string> Blocks(const std::string& text) {
  std::vector<std::string> blocks;
  size_t pos = 0;
  while ((pos = text.find("Unicast lids", pos)) != std::string::npos) {
    const size_t next = text.find("Unicast lids", pos + 1);
    blocks.push_back(text.substr(pos, next == std::string::npos ? next : next - pos));
    pos = next;
  }
  std::sort(blocks.begin(), blocks.end());
  return blocks;
}

// OpenSM's own dump and dump_fts (read back from the switches) of the same run must agree.
TEST(LftDumpTest, OpenSmDumpAndDumpFtsAgree) {
  for (const std::string prefix : {"small", "small-lmc1", "dual"}) {
    SCOPED_TRACE(prefix);
    const Fabric f = ReadFabric(prefix + ".ibnetdiscover");
    const LftSet from_osm = ReadLfts(prefix + ".opensm-lfts.dump", f);
    const LftSet from_switches = ReadLfts(prefix + ".dump_fts", f);
    EXPECT_EQ(from_osm.num_switches(), f.num_switches());
    EXPECT_EQ(from_osm.max_lid(), f.max_lid());
    EXPECT_TRUE(from_osm == from_switches);
  }
}

// Independent of either file: every switch routes its own LID to port 0 and the LIDs of a
// directly cabled HCA port out of that port.
TEST(LftDumpTest, TablesReachNeighbours) {
  const Fabric f = ReadFabric("small-lmc1.ibnetdiscover");
  const LftSet lfts = ReadLfts("small-lmc1.dump_fts", f);
  int checked = 0;
  for (NodeId sw : f.switches()) {
    const int i = f.switch_index(sw);
    EXPECT_EQ(lfts.port(i, f.switch_lid(sw)), 0);
    for (int p = 1; p <= f.num_ports(sw); ++p) {
      const PortRef peer = f.peer({sw, p});
      if (!peer.valid() || f.is_switch(peer.node)) continue;
      const Lid base = f.base_lid(peer);
      for (Lid l = base; l < base + (1u << f.lmc(peer)); ++l) {
        EXPECT_EQ(lfts.port(i, l), p);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 6);  // 3 HCAs x 2 LIDs
}

// Our writer must produce what OpenSM itself writes for the same tables.
TEST(LftDumpTest, WriterMatchesOpenSmDump) {
  for (const std::string prefix : {"small", "small-lmc1", "dual"}) {
    SCOPED_TRACE(prefix);
    const Fabric f = ReadFabric(prefix + ".ibnetdiscover");
    std::string osm_text;
    ASSERT_TRUE(ReadFileToString(TestDataPath(prefix + ".opensm-lfts.dump"), &osm_text).ok());
    LftSet lfts;
    ASSERT_TRUE(ParseLftDump(osm_text, "osm", f, &lfts).ok());
    const std::string ours = FormatLftDump(f, lfts);
    EXPECT_EQ(Blocks(ours), Blocks(osm_text));
    ASSERT_FALSE(ours.empty());
    EXPECT_EQ(ours.back(), '\n');
  }
}

TEST(LftDumpTest, FormatParseRoundTrip) {
  const Fabric f = ReadFabric("small.ibnetdiscover");
  LftSet lfts(f);
  // A table with holes and every port number in use.
  for (int s = 0; s < f.num_switches(); ++s) {
    for (Lid l = 1; l <= f.max_lid(); ++l) {
      if ((l + s) % 3 != 0) lfts.set_port(s, l, static_cast<uint8_t>((l * 5 + s) % 9));
    }
  }
  LftSet back;
  const Status st = ParseLftDump(FormatLftDump(f, lfts), "w", f, &back);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(back == lfts);
}

TEST(LftDumpTest, MissingSwitchKeepsNoRoutes) {
  const Fabric f = ReadFabric("small.ibnetdiscover");
  LftSet lfts;
  ASSERT_TRUE(ParseLftDump("Unicast lids [0-6] of switch Lid 2 guid 0x0002c90000100000 ('x'):\n"
                           "0x0001 001\n",
                           "t", f, &lfts)
                  .ok());
  const int leaf01 = f.switch_index(f.FindByNodeGuid(0x2c90000100000));
  for (int s = 0; s < f.num_switches(); ++s) {
    for (Lid l = 0; l <= f.max_lid(); ++l) {
      const uint8_t want = (s == leaf01 && l == 1) ? 1 : LftSet::kNoRoute;
      EXPECT_EQ(lfts.port(s, l), want) << s << " " << l;
    }
  }
}

TEST(LftDumpTest, UnknownSwitchCanBeIgnored) {
  const Fabric f = ReadFabric("small.ibnetdiscover");
  const std::string text =
      "Unicast lids [0-6] of switch Lid 9 guid 0x00000000000abcde ('gone'):\n0x0001 001\n"
      "Unicast lids [0-6] of switch Lid 2 guid 0x0002c90000100000 ('leaf01'):\n0x0001 002\n";
  LftSet lfts;
  const Status strict = ParseLftDump(text, "t.dump", f, &lfts);
  EXPECT_EQ(strict.code(), Status::Code::kCorruption);
  EXPECT_NE(strict.message().find("t.dump:1:"), std::string::npos) << strict.message();
  ASSERT_TRUE(ParseLftDump(text, "t.dump", f, &lfts, {.ignore_unknown_switches = true}).ok());
  EXPECT_EQ(lfts.port(f.switch_index(f.FindByNodeGuid(0x2c90000100000)), 1), 2);
}

TEST(LftDumpTest, MalformedInputNamesFileAndLine) {
  const Fabric f = ReadFabric("small.ibnetdiscover");  // max LID 6, switches have 8 ports
  const std::string h = "Unicast lids [0-6] of switch Lid 2 guid 0x0002c90000100000 ('leaf01'):\n";
  struct Case {
    std::string what, text;
    int line;
  } cases[] = {
      {"route before header", "# x\n0x0001 001\n", 2},
      {"header without guid", "Unicast lids [0-6] of switch Lid 2:\n", 1},
      {"LID beyond the fabric", h + "0x0001 001\n0x0007 001\n", 3},
      {"LID zero", h + "0x0000 001\n", 2},
      {"port beyond the switch", h + "0x0001 009\n", 2},
      {"no port", h + "0x0001\n", 2},
      {"port not a number", h + "0x0001 abc\n", 2},
      {"junk after port", h + "0x0001 001 junk\n", 2},
      {"LID twice", h + "0x0001 001\n0x0002 001\n0x0001 002\n", 4},
      {"switch twice", h + "0x0001 001\n" + h, 3},
      {"bad lid digits", h + "0xzz 001\n", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    LftSet lfts;
    const Status s = ParseLftDump(c.text, "bad.dump", f, &lfts);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("bad.dump:" + std::to_string(c.line) + ":"), std::string::npos)
        << s.message();
  }
}

// The compact form reads back to the same tables as the OpenSM text form, on OpenSM's own tables
// (with LMC) and on a synthetic one with holes, every port number, all-ff blocks and a last
// partial block.
TEST(LftDumpTest, CompactFormRoundTrip) {
  for (const std::string prefix : {"small", "small-lmc1", "dual"}) {
    SCOPED_TRACE(prefix);
    const Fabric f = ReadFabric(prefix + ".ibnetdiscover");
    const LftSet osm = ReadLfts(prefix + ".opensm-lfts.dump", f);
    const std::string compact = FormatCompactLftDump(f, osm);
    EXPECT_EQ(compact.rfind("sar-lfts-compact 1\n", 0), 0u);
    LftSet back;
    const Status st = ParseLftDump(compact, "c", f, &back);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(back == osm);
  }
  const Fabric f = ReadFabric("small.ibnetdiscover");
  LftSet lfts(f);
  for (int s = 0; s < f.num_switches(); ++s) {
    for (Lid l = 1; l <= f.max_lid(); ++l) {
      if ((l + s) % 3 != 0 && s != 1) lfts.set_port(s, l, static_cast<uint8_t>((l * 5 + s) % 9));
    }
  }
  LftSet back;
  ASSERT_TRUE(ParseLftDump(FormatCompactLftDump(f, lfts), "c", f, &back).ok());
  EXPECT_TRUE(back == lfts);
  // Through a file, as eval / diff-lfts / compare read it.
  char dir[] = "/tmp/sar_lft_compact.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/t.lfts";
  ASSERT_TRUE(WriteCompactLftDump(path, f, lfts).ok());
  LftSet from_file;
  ASSERT_TRUE(ReadLftDump(path, f, &from_file).ok());
  EXPECT_TRUE(from_file == lfts);
  ::unlink(path.c_str());
  ::rmdir(dir);
}

TEST(LftDumpTest, MalformedCompactFormNamesFileAndLine) {
  const Fabric f = ReadFabric("small.ibnetdiscover");  // max LID 6, switches have 8 ports
  const std::string m = "sar-lfts-compact 1\n";
  const std::string h = m + "switch 0x0002c90000100000 lid 2 'leaf01'\n";
  struct Case {
    std::string what, text;
    int line;
  } cases[] = {
      {"LIDs before a switch", m + "# x\n0x0000 ff01\n", 3},
      {"switch without guid", m + "switch leaf01\n", 2},
      {"unknown switch", m + "switch 0x00000000000abcde\n", 2},
      {"LIDs beyond the fabric", h + "0x0000 ff0101010101010101\n", 3},
      {"route for LID 0", h + "0x0000 01\n", 3},
      {"port beyond the switch", h + "0x0000 ff09\n", 3},
      {"odd hex digits", h + "0x0000 ff0\n", 3},
      {"not hex", h + "0x0000 ffzz\n", 3},
      {"no first LID", h + "ff01\n", 3},
      {"LID twice", h + "0x0000 ff01\n0x0001 02\n", 4},
      {"switch twice", h + "0x0000 ff01\nswitch 0x0002c90000100000\n", 4},
      {"more than 64 LIDs", h + "0x0000 " + std::string(130, 'f') + "\n", 3},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    LftSet lfts;
    const Status s = ParseLftDump(c.text, "bad.lfts", f, &lfts);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("bad.lfts:" + std::to_string(c.line) + ":"), std::string::npos)
        << s.message();
  }
}

// OpenSM's `file` routing engine must load what we write: change two routes of OpenSM's own
// tables, load them with `-R file,no_fallback`, and read the switches back with dump_fts.
// Skipped where ibsim/OpenSM/umad2sim are not installed.
TEST(LftDumpTest, OpenSmFileEngineLoadsWrittenDump) {
  const char* umad2sim = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so";
  if (::access(umad2sim, R_OK) != 0) GTEST_SKIP() << "umad2sim not installed";
  for (const std::string tool : {"ibsim", "opensm", "ibsim-run"}) {
    if (::access(("/usr/bin/" + tool).c_str(), X_OK) != 0 &&
        ::access(("/usr/sbin/" + tool).c_str(), X_OK) != 0) {
      GTEST_SKIP() << tool << " not installed";
    }
  }
  const Fabric f = ReadFabric("small.ibnetdiscover");
  LftSet lfts = ReadLfts("small.opensm-lfts.dump", f);
  const int leaf01 = f.switch_index(f.FindByNodeGuid(0x2c90000100000));
  // leaf01 reaches leaf02 (LID 3) and h0201 (LID 6) over spine cable 7; move both to cable 8.
  ASSERT_EQ(lfts.port(leaf01, 3), 7);
  ASSERT_EQ(lfts.port(leaf01, 6), 7);
  lfts.set_port(leaf01, 3, 8);
  lfts.set_port(leaf01, 6, 8);
  const std::string dir = io::testing::MakeTempDir();
  ASSERT_TRUE(WriteLftDump(dir + "/lfts.dump", f, lfts).ok());
  const std::string cmd =
      "cd " + dir + " && mkdir cache dump && cp " + TestDataPath("small.guid2lid") +
      " cache/guid2lid && export IBSIM_SOCKNAME=sar-io-lft-" + std::to_string(::getpid()) +
      " SIM_HOST=h0101 OSM_CACHE_DIR=$PWD/cache OSM_TMP_DIR=$PWD/dump && mkfifo ctl && "
      "printf 'force_log_flush TRUE\\nsweep_interval 0\\nconsole off\\n' > opensm.conf && "
      "{ timeout 30 ibsim -s " +
      TestDataPath("small.topo") +
      " <>ctl >ibsim.out 2>&1 & p=$!; "
      "sleep 0.4; LD_PRELOAD=" +
      umad2sim +
      " timeout 20 opensm -F opensm.conf -f opensm.log -o "
      "-R file,no_fallback -U lfts.dump >opensm.out 2>&1 && "
      "timeout 10 ibsim-run dump_fts >fts 2>fts.err; rc=$?; kill $p; wait $p 2>/dev/null; "
      "exit $rc; }";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  LftSet loaded;
  const Status s = ReadLftDump(dir + "/fts", f, &loaded);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(loaded == lfts);
  EXPECT_EQ(loaded.port(leaf01, 6), 8);
}

}  // namespace
}  // namespace sar
