#include "config.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace sar::filterd {
namespace {

TEST(Config, ReadsEveryOptionOfTheShippedExample) {
  // The documented example must parse, and every key in it must be one the parser knows.
  std::ifstream in(std::string(SAR_SOURCE_DIR) + "/config/sar-filterd.yaml");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  Config c;
  Status s = ParseConfig(text.str(), "sar-filterd.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.source, "slurm");
}

TEST(Config, TheExampleDocumentsEveryOption) {
  // Independent of the parser: the top-level keys as yaml-cpp reads them from the shipped file.
  const YAML::Node root = YAML::LoadFile(std::string(SAR_SOURCE_DIR) + "/config/sar-filterd.yaml");
  std::vector<std::string> documented;
  for (const auto& kv : root) documented.push_back(kv.first.Scalar());
  std::sort(documented.begin(), documented.end());
  EXPECT_EQ(documented, ConfigKeys());
}

TEST(Config, ValuesAndDefaults) {
  Config c;
  Status s = ParseConfig(
      "topology_conf: /etc/slurm/topology.conf\nmin_leaves: 3\nignore_partitions: [debug, gpu]\n"
      "settle_s: 2.5\ntrigger: none\njob_hca_pairs: all\n",
      "x.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.filter.min_leaves, 3);
  EXPECT_EQ(c.filter.hca_pairs, JobHcaPairs::kAll);
  EXPECT_EQ(Config().filter.hca_pairs, JobHcaPairs::kRails);
  EXPECT_EQ(c.filter.ignore_partitions, (std::vector<std::string>{"debug", "gpu"}));
  EXPECT_DOUBLE_EQ(c.settle_s, 2.5);
  EXPECT_EQ(c.trigger, Trigger::kNone);
  EXPECT_EQ(c.poll_interval_s, Config().poll_interval_s);
  EXPECT_TRUE(c.verify_sm_process);  // safe by default; false is for test stand-ins only
  EXPECT_EQ(c.opensm_pid_files, (std::vector<std::string>{"/run/opensm.pid"}));
}

// opensm_pid_file: one path, or a list (master and standby OpenSMs); never empty.
TEST(Config, OneOrSeveralOpenSmPidFiles) {
  Config c;
  const std::string base = "topology_conf: /t\n";
  ASSERT_TRUE(ParseConfig(base + "opensm_pid_file: /run/a.pid\n", "x.yaml", &c).ok());
  EXPECT_EQ(c.opensm_pid_files, (std::vector<std::string>{"/run/a.pid"}));
  ASSERT_TRUE(ParseConfig(base + "opensm_pid_file: [/run/a.pid, /run/b.pid]\n", "x.yaml", &c).ok());
  EXPECT_EQ(c.opensm_pid_files, (std::vector<std::string>{"/run/a.pid", "/run/b.pid"}));
  for (const char* bad : {"opensm_pid_file: []\n", "opensm_pid_file: [/a, \"\"]\n",
                          "opensm_pid_file: \"\"\n", "opensm_pid_file: {a: b}\n"}) {
    Config d;
    const Status s = ParseConfig(base + bad, "x.yaml", &d);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("x.yaml:2"), std::string::npos) << s.message();
  }
}

TEST(Config, LargestAcceptedValues) {
  Config c;
  Status s = ParseConfig(
      "fabric: f\npoll_interval_s: 86400\nmetrics_listen: \"127.0.0.1:19192\"\n"
      "verify_sm_process: false\n",
      "x.yaml", &c);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c.poll_interval_s, 86400);
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:19192");
  EXPECT_FALSE(c.verify_sm_process);
}

// Each malformed config names the line of the offending key or value.
TEST(Config, ErrorsCarryFileAndLine) {
  const struct {
    const char* text;
    const char* where;
  } cases[] = {
      {"fabric: f.topo\nbogus: 1\n", "x.yaml:2:"},
      {"fabric: f.topo\n\npoll_interval_s: -3\n", "x.yaml:3:"},
      {"fabric: f.topo\nmin_leaves: many\n", "x.yaml:2:"},
      {"fabric: f.topo\njob_hca_pairs: rail\n",
       "x.yaml:2: 'job_hca_pairs' must be one of: rails, all"},
      {"fabric: f.topo\ntrigger: telepathy\n", "x.yaml:2:"},
      {"fabric: [unclosed\n", "x.yaml:"},
      {"poll_interval_s: 5\n", "set exactly one"},
      {"fabric: a\ntopology_conf: b\n", "set exactly one"},
      {"subnet_lst: a\ntopology_conf: b\n", "set exactly one"},
      {"fabric: a\nsource: replay\n", "replay_trace"},
      // Issue 19 defect 10: 2,147,484 s overflowed an int of milliseconds into a busy loop.
      {"fabric: f.topo\n\npoll_interval_s: 2147484\n",
       "x.yaml:3: 'poll_interval_s' must be > 0 and <= 86400"},
      {"fabric: f.topo\npoll_interval_s: .inf\n", "x.yaml:2:"},
      // Issue 34: 1e-9 s ran squeue about 250 times a second.
      {"fabric: f.topo\n\npoll_interval_s: 1e-9\n",
       "x.yaml:3: 'poll_interval_s' must be >= 0.1 (each poll asks SLURM for every job; not "
       "'1e-09')"},
      {"fabric: f.topo\npoll_interval_s: 0.09\n", "x.yaml:2: 'poll_interval_s' must be >= 0.1"},
      {"fabric: f.topo\n\nmapping_group: no-such-group-34\n",
       "x.yaml:3: 'mapping_group': no group 'no-such-group-34'"},
      {"fabric: f.topo\nsettle_s: .nan\n", "x.yaml:2:"},
      {"fabric: f.topo\nmin_reroute_interval_s: 1e300\n", "x.yaml:2:"},
      {"fabric: f.topo\nevent_coalesce_ms: 1e12\n", "x.yaml:2:"},
      {"fabric: f.topo\nsource_timeout_s: 1e9\n", "x.yaml:2:"},
      {"fabric: f.topo\nretry_backoff_s: 3601\n", "x.yaml:2:"},
      {"fabric: f.topo\npoll_retries: 100000\n", "x.yaml:2:"},
      {"fabric: f.topo\nconsole_port: 70000\n", "x.yaml:2:"},
      // Issue 19 defect 16: trailing garbage after the port, caught at load.
      {"fabric: f.topo\n\nmetrics_listen: \"127.0.0.1:19192x\"\n",
       "x.yaml:3: metrics_listen '127.0.0.1:19192x'"},
      {"fabric: f.topo\nmetrics_listen: \"10.0.0.1:9733\"\n", "x.yaml:2:"},
      {"fabric: f.topo\nverify_sm_process: maybe\n", "x.yaml:2:"},
  };
  for (const auto& c : cases) {
    Config config;
    Status s = ParseConfig(c.text, "x.yaml", &config);
    EXPECT_FALSE(s.ok()) << c.text;
    EXPECT_NE(s.message().find(c.where), std::string::npos) << c.text << " -> " << s.message();
  }
}

}  // namespace
}  // namespace sar::filterd
