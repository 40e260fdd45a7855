#include "daemon_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "migration_status.h"

namespace sar::filterd {
namespace {

// The value of each sample line of `name` (labels included in the key), as a scraper reads it.
std::map<std::string, double> Samples(const std::string& body, const std::string& name) {
  std::map<std::string, double> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind(name, 0) != 0) continue;
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

// Durations are Prometheus histograms: cumulative buckets, +Inf equal to _count, _sum the total.
// Checked against the observations themselves, bucket by bucket.
TEST(DaemonMetrics, DurationsAreCumulativeHistograms) {
  DaemonMetrics m;
  const double polls[] = {0.0005, 0.003, 0.003, 0.2, 7.0, 500.0, -1.0, std::nan("")};
  double sum = 0;
  for (double s : polls) {
    m.poll_seconds.Observe(s);
    sum += (s >= 0) ? s : 0;
  }
  const std::string body = FormatPrometheus(m);
  EXPECT_NE(body.find("# TYPE sar_filterd_poll_seconds histogram\n"), std::string::npos) << body;
  const auto samples = Samples(body, "sar_filterd_poll_seconds");
  for (double bound : DurationHistogram::kBounds) {
    int expected = 0;
    for (double s : polls) expected += (!(s >= 0) || s <= bound) ? 1 : 0;
    std::ostringstream key;
    key << "sar_filterd_poll_seconds_bucket{le=\"" << bound << "\"}";
    ASSERT_TRUE(samples.count(key.str())) << key.str() << "\n" << body;
    EXPECT_EQ(samples.at(key.str()), expected) << key.str();
  }
  EXPECT_EQ(samples.at("sar_filterd_poll_seconds_bucket{le=\"+Inf\"}"), 8);
  EXPECT_EQ(samples.at("sar_filterd_poll_seconds_count"), 8);
  EXPECT_NEAR(samples.at("sar_filterd_poll_seconds_sum"), sum, 1e-9);
  // The others exist, empty.
  EXPECT_EQ(Samples(body, "sar_filterd_cycle_seconds").at("sar_filterd_cycle_seconds_count"), 0);
  EXPECT_EQ(Samples(body, "sar_filterd_action_seconds").at("sar_filterd_action_seconds_count"), 0);
}

TEST(DaemonMetrics, PendingChangeSinceIsExported) {
  DaemonMetrics m;
  m.pending_change_since_unix_s = 1795377601;
  const auto samples = Samples(FormatPrometheus(m), "sar_filterd_pending_change_since");
  EXPECT_EQ(samples.at("sar_filterd_pending_change_since_timestamp_seconds"), 1795377601);
}

// The names the daemon exports (samples, histogram series included), from its own formatter.
std::set<std::string> ExportedNames() {
  MigrationStatus migration;
  migration.phase = 5;
  const std::string body = FormatPrometheus(DaemonMetrics{}) + FormatMigrationPrometheus(migration);
  std::set<std::string> names;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of("{ ")));
  }
  return names;
}

// The shipped Grafana dashboard and Prometheus rules (config/) name only metrics the daemon
// exports: a renamed metric would leave a panel empty and an alert silent, with no error.
TEST(DaemonMetrics, DashboardAndRulesNameOnlyExportedMetrics) {
  const std::set<std::string> exported = ExportedNames();
  ASSERT_TRUE(exported.count("sar_filterd_poll_seconds_bucket"));
  for (const char* file : {"/config/grafana/sar.json", "/config/prometheus/sar-rules.yml"}) {
    std::ifstream in(std::string(SAR_SOURCE_DIR) + file);
    ASSERT_TRUE(in) << file;
    std::stringstream text;
    text << in.rdbuf();
    const std::string body = text.str();
    const std::regex metric("sar_filterd_[a-z_]+");
    int found = 0;
    for (auto it = std::sregex_iterator(body.begin(), body.end(), metric);
         it != std::sregex_iterator(); ++it) {
      ++found;
      EXPECT_TRUE(exported.count(it->str()))
          << file << " names " << it->str() << ", which the daemon does not export";
    }
    EXPECT_GE(found, 8) << file;
  }
}

}  // namespace
}  // namespace sar::filterd
