#include "migration_status.h"

#include <gtest/gtest.h>

namespace sar::filterd {
namespace {

// A line as the plugin writes it (docs/opensm-plugin.md).
constexpr const char* kLine =
    R"({"epoch":95370601,"phase":2,"phase_name":"drain","expected":3,"acked":2,)"
    R"("waiting":["0x0002c90000200013"],"excluded":[],"pending":true,"last_epoch":95370586,)"
    R"("last_outcome":"released","last_ms":{"plan":1,"drain":1512,"push":10,"repath":1507,)"
    R"("total":3030},"epochs_started":2,"acks_ignored":5,"updated_ms":11505279})";

TEST(MigrationStatusTest, ParsesThePluginsLine) {
  MigrationStatus m;
  ASSERT_TRUE(ParseMigrationStatus(kLine, "s.json", &m).ok());
  EXPECT_EQ(m.epoch, 95370601u);
  EXPECT_EQ(m.phase, 2);
  EXPECT_EQ(m.phase_name, "drain");
  EXPECT_EQ(m.acked, 2);
  EXPECT_EQ(m.expected, 3);
  ASSERT_EQ(m.waiting.size(), 1u);
  EXPECT_TRUE(m.pending);
  EXPECT_EQ(m.last_outcome, "released");
  EXPECT_EQ(m.last_ms.at("total"), 3030);
  EXPECT_EQ(MigrationStatusLine(m),
            " migration_epoch=95370601 migration_phase=drain acks=2/3 waiting=1 "
            "last_epoch=95370586 last_outcome=released last_total_ms=3030");
  std::string prom = FormatMigrationPrometheus(m);
  EXPECT_NE(prom.find("sar_filterd_migration_phase 2\n"), std::string::npos);
  EXPECT_NE(prom.find("sar_filterd_migration_last_outcome{outcome=\"released\"} 1\n"),
            std::string::npos);
  EXPECT_NE(prom.find("sar_filterd_migration_last_outcome{outcome=\"aborted-timeout\"} 0\n"),
            std::string::npos);
  EXPECT_NE(prom.find("sar_filterd_migration_last_phase_seconds{phase=\"drain\"} 1.512\n"),
            std::string::npos);
  EXPECT_NE(prom.find("sar_filterd_migration_acks_ignored_total 5\n"), std::string::npos);
}

TEST(MigrationStatusTest, MalformedIsAnErrorNamingTheFile) {
  MigrationStatus m;
  m.epoch = 7;
  for (const char* bad : {"", "[1]", "{\"epoch\":1}",
                          "{\"epoch\":\"x\",\"phase\":1,"
                          "\"phase_name\":\"plan\"}",
                          "{\"epoch\":1,\"phase\":9,\"phase_name\":\"x\"}"}) {
    Status s = ParseMigrationStatus(bad, "/run/sar/migration.json", &m);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.ToString().find("/run/sar/migration.json"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(m.epoch, 7u);  // untouched on error
}

TEST(MigrationStatusTest, MissingFileIsAnError) {
  MigrationStatus m;
  EXPECT_FALSE(ReadMigrationStatus("/nonexistent/migration.json", &m).ok());
}

}  // namespace
}  // namespace sar::filterd
