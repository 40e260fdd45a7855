// The plugin's config file: defaults, every key, errors with file:line, the shipped sample, and
// the routing options it stands for (checked by routing with them: a missing mapping file is
// optional, as the plugin needs before sar-filterd first writes it).
#include "osmsar_config.h"

#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace {

std::string TempFile(const std::string& name, const std::string& text) {
  static const std::string dir = [] {
    std::string t = "/tmp/osmsar_config_test.XXXXXX";
    EXPECT_NE(::mkdtemp(t.data()), nullptr);
    return t;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Reads `path` over the defaults; the error message, or "" on success.
std::string Read(const std::string& path, OsmsarConfig* c) {
  OsmsarConfigInit(c);
  char* err = nullptr;
  const int rc = OsmsarReadConfig(path.c_str(), c, &err);
  std::string msg = err ? err : "";
  sar_free(err);
  EXPECT_EQ(rc != 0, !msg.empty());
  return msg;
}

TEST(OsmsarConfig, DefaultsAndEveryKey) {
  OsmsarConfig c;
  OsmsarConfigInit(&c);
  EXPECT_STREQ(c.engine, "sar");
  EXPECT_EQ(c.num_vls, 8);
  EXPECT_EQ(c.sar_refine, 1);
  EXPECT_DOUBLE_EQ(c.sar_all_pairs_budget, 1.25);
  EXPECT_EQ(c.sar_refine_work, uint64_t{1} << 28);
  const std::string path = TempFile(
      "ok.conf",
      "# comment\n\nengine dfsssp\nmapping_file /run/sar/jobs  # trailing\ncn_guid_file /a\n"
      "io_guid_file /b\r\nnum_vls 4\nthreads 2\nallow_disconnected true\nsar_refine off\n"
      "sar_all_pairs_budget 1.5\nsar_refine_work 134217728\njob_hca_pairs all");
  ASSERT_EQ(Read(path, &c), "");
  EXPECT_STREQ(c.engine, "dfsssp");
  EXPECT_STREQ(c.mapping_file, "/run/sar/jobs");
  EXPECT_STREQ(c.cn_guid_file, "/a");
  EXPECT_STREQ(c.io_guid_file, "/b");
  EXPECT_EQ(c.num_vls, 4);
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.allow_disconnected, 1);
  EXPECT_EQ(c.sar_refine, 0);
  EXPECT_DOUBLE_EQ(c.sar_all_pairs_budget, 1.5);
  EXPECT_EQ(c.sar_refine_work, uint64_t{1} << 27);
  EXPECT_EQ(c.job_hca_pairs_all, 1);
  EXPECT_EQ(c.migration, 0);
  EXPECT_EQ(c.ack_timeout_ms, 2000);
  EXPECT_EQ(c.exclude_after, 3);
  EXPECT_EQ(c.ack_scope_changed, 0);
}

// Issue 34: FORS schedules are 0640; the group that may read them is a config key, checked at
// load.
TEST(OsmsarConfig, ForsScheduleGroupKey) {
  OsmsarConfig c;
  OsmsarConfigInit(&c);
  EXPECT_EQ(c.fors_schedule_gid, -1);
  EXPECT_STREQ(c.fors_schedule_group, "");
  ASSERT_EQ(Read(TempFile("group.conf", "fors_schedule_group root\n"), &c), "");
  EXPECT_STREQ(c.fors_schedule_group, "root");
  EXPECT_EQ(c.fors_schedule_gid, 0);
  ASSERT_EQ(Read(TempFile("gid.conf", "fors_schedule_group 4242\n"), &c), "");
  EXPECT_EQ(c.fors_schedule_gid, 4242);
  const std::string path = TempFile("nogroup.conf", "\nfors_schedule_group no-such-group-34\n");
  EXPECT_NE(Read(path, &c).find(path + ":2: fors_schedule_group: no group 'no-such-group-34'"),
            std::string::npos)
      << Read(path, &c);
}

TEST(OsmsarConfig, DeltaKey) {
  OsmsarConfig c;
  OsmsarConfigInit(&c);
  EXPECT_EQ(c.delta, 1);  // on by default
  ASSERT_EQ(Read(TempFile("delta.conf", "delta false\n"), &c), "");
  EXPECT_EQ(c.delta, 0);
  ASSERT_EQ(Read(TempFile("delta2.conf", "delta on\n"), &c), "");
  EXPECT_EQ(c.delta, 1);
  EXPECT_NE(Read(TempFile("delta3.conf", "delta sometimes\n"), &c).find(":1:"), std::string::npos);
}

TEST(OsmsarConfig, MigrationKeys) {
  OsmsarConfig c;
  const std::string path = TempFile("mig.conf",
                                    "migration on\nack_timeout_ms 500\nrepath_timeout_ms 700\n"
                                    "exclude_after 2\nack_scope changed\n"
                                    "status_file /run/sar/migration.json\n");
  ASSERT_EQ(Read(path, &c), "");
  EXPECT_EQ(c.migration, 1);
  EXPECT_EQ(c.ack_timeout_ms, 500);
  EXPECT_EQ(c.repath_timeout_ms, 700);
  EXPECT_EQ(c.exclude_after, 2);
  EXPECT_EQ(c.ack_scope_changed, 1);
  EXPECT_STREQ(c.status_file, "/run/sar/migration.json");
  EXPECT_NE(Read(TempFile("m2.conf", "ack_scope some\n"), &c)
                .find(":1: ack_scope must be all or "
                      "changed, not 'some'"),
            std::string::npos);
  EXPECT_NE(Read(TempFile("m3.conf", "exclude_after 0\n"), &c).find(":1: exclude_after must be"),
            std::string::npos);
  EXPECT_NE(Read(TempFile("m4.conf", "migration maybe\n"), &c).find("must be true or false"),
            std::string::npos);
}

TEST(OsmsarConfig, BadLinesNameFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"engine sar\nbogus_key 1\n", ":2: unknown key 'bogus_key'"},
      {"engine ftree\n",
       ":1: engine must be one of minhop, updn, dfsssp, sar, dmodk, dmodc, sar-dmodc, osrm2, "
       "osrm3, not 'ftree'"},
      {"\nnum_vls 16\n", ":2: num_vls must be an integer in 1..15, not '16'"},
      {"num_vls x\n", ":1: num_vls must be an integer in 1..15, not 'x'"},
      {"mapping_file\n", ":1: expected '<key> <value>', got 'mapping_file'"},
      {"threads -1\n", ":1: threads must be an integer in 0..1024, not '-1'"},
      {"sar_all_pairs_budget -1\n",
       ":1: sar_all_pairs_budget must be a number in 0..1000 (0 = no cap), not '-1'"},
      {"sar_refine_work -1\n", ":1: sar_refine_work must be an integer in 1..1099511627776"},
      {"sar_refine_work 0\n", ":1: sar_refine_work must be an integer in 1..1099511627776"},
      {"sar_refine_work 1099511627777\n", ":1: sar_refine_work must be an integer in 1.."},
      {"sar_refine_work 99999999999999999999999\n", ":1: sar_refine_work must be an integer"},
      {"sar_refine_work 2^27\n", ":1: sar_refine_work must be an integer"},
      {"mapping_file /" + std::string(OSMSAR_PATH_MAX, 'x') + "\n",
       ":1: mapping_file path too long"}};
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string path = TempFile("bad" + std::to_string(i) + ".conf", bad[i].first);
    OsmsarConfig c;
    const std::string err = Read(path, &c);
    EXPECT_NE(err.find(path + bad[i].second), std::string::npos) << err;
  }
  OsmsarConfig c;
  EXPECT_NE(Read("/nonexistent/osmsar.conf", &c).find("/nonexistent/osmsar.conf"),
            std::string::npos);
}

// The shipped sample must load as it is.
TEST(OsmsarConfig, ShippedSampleLoads) {
  std::string here = __FILE__;
  const std::string sample = here.substr(0, here.rfind("opensm-patch/")) + "config/osmsar.conf";
  OsmsarConfig c;
  EXPECT_EQ(Read(sample, &c), "");
}

// The options route a two-switch fabric; the configured mapping does not exist yet, which the
// plugin's options treat as "no jobs" (plain dfsssp, noted), and num_vls reaches the pass.
TEST(OsmsarConfig, OptionsRouteWithAnOptionalMapping) {
  OsmsarConfig c;
  ASSERT_EQ(Read(TempFile("opts.conf", "mapping_file /nonexistent/osmsar/jobs\nnum_vls 2\n"), &c),
            "");
  sar_options_t* o = OsmsarOptions(&c);
  ASSERT_NE(o, nullptr);
  const sar_node_t nodes[4] = {
      {0x10, 1, 4, "sw0"}, {0x11, 1, 4, "sw1"}, {0x20, 0, 1, "h0 HCA-1"}, {0x22, 0, 1, "h1 HCA-1"}};
  const sar_port_t ports[4] = {
      {0, 0, 0x10, 3, 0}, {1, 0, 0x11, 4, 0}, {2, 1, 0x21, 1, 0}, {3, 1, 0x23, 2, 0}};
  const sar_link_t links[3] = {{0, 1, 1, 1, 0, 0}, {2, 1, 0, 2, 0, 0}, {3, 1, 1, 2, 0, 0}};
  char* err = nullptr;
  sar_fabric_t* f = sar_fabric_create(nodes, 4, ports, 4, links, 3, &err);
  ASSERT_NE(f, nullptr) << err;
  sar_result_t* r = sar_route(f, o, &err);
  ASSERT_NE(r, nullptr) << err;
  EXPECT_STREQ(sar_result_engine(r), "dfsssp");
  ASSERT_GE(sar_result_num_notes(r), 1);
  EXPECT_NE(std::string(sar_result_note(r, 0)).find("does not exist: routing with plain dfsssp"),
            std::string::npos);
  EXPECT_EQ(sar_result_lft_row(r, 0)[2], 1);  // sw0 sends h1 (LID 2) over the inter-switch cable
  sar_result_destroy(r);
  sar_fabric_destroy(f);
  sar_options_destroy(o);
}

}  // namespace
