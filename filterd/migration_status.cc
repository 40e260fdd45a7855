#include "migration_status.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "sar/io/file_util.h"

namespace sar::filterd {
namespace {

constexpr size_t kMaxStatusBytes = 64 * 1024;
// The outcomes the plugin writes; a label per outcome so a dashboard can count them.
constexpr const char* kOutcomes[] = {"released",   "released-late-repath", "released-unconfirmed",
                                     "no-change",  "aborted-timeout",      "aborted-topology",
                                     "plan-failed"};

}  // namespace

Status ParseMigrationStatus(const std::string& text, const std::string& source,
                            MigrationStatus* out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Corruption(source + ": not a JSON object");
  }
  MigrationStatus m;
  try {
    m.epoch = j.at("epoch").get<uint64_t>();
    m.phase = j.at("phase").get<int>();
    m.phase_name = j.at("phase_name").get<std::string>();
    m.expected = j.value("expected", int64_t{0});
    m.acked = j.value("acked", int64_t{0});
    if (j.contains("waiting")) m.waiting = j.at("waiting").get<std::vector<std::string>>();
    m.pending = j.value("pending", false);
    m.last_epoch = j.value("last_epoch", uint64_t{0});
    m.last_outcome = j.value("last_outcome", std::string());
    if (j.contains("last_ms") && j.at("last_ms").is_object()) {
      for (const auto& [k, v] : j.at("last_ms").items()) m.last_ms[k] = v.get<int64_t>();
    }
    m.epochs_started = j.value("epochs_started", uint64_t{0});
    m.acks_ignored = j.value("acks_ignored", uint64_t{0});
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(source + ": " + e.what());
  }
  if (m.phase < 1 || m.phase > 5) {
    return Status::Corruption(source + ": phase " + std::to_string(m.phase) + " not in 1..5");
  }
  *out = std::move(m);
  return Status::OK();
}

Status ReadMigrationStatus(const std::string& path, MigrationStatus* out) {
  std::string text;
  ReadOptions opt;
  opt.max_bytes = kMaxStatusBytes;
  opt.regular_file_only = true;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, opt, &text));
  return ParseMigrationStatus(text, path, out);
}

std::string MigrationStatusLine(const MigrationStatus& m) {
  return fmt::format(
      " migration_epoch={} migration_phase={} acks={}/{} waiting={} "
      "last_epoch={} last_outcome={} last_total_ms={}",
      m.epoch, m.phase_name, m.acked, m.expected, m.waiting.size(), m.last_epoch,
      m.last_outcome.empty() ? "-" : m.last_outcome,
      m.last_ms.count("total") ? m.last_ms.at("total") : 0);
}

std::string FormatMigrationPrometheus(const MigrationStatus& m) {
  std::string out;
  auto add = [&out](const char* name, const char* type, const char* help, auto value) {
    out += fmt::format(
        "# HELP sar_filterd_migration_{0} {1}\n# TYPE sar_filterd_migration_{0} {2}\n"
        "sar_filterd_migration_{0} {3}\n",
        name, help, type, value);
  };
  add("epoch", "gauge", "Current (or last) migration epoch of the OpenSM plugin.", m.epoch);
  add("phase", "gauge", "Its phase: 1 plan, 2 drain, 3 push, 4 repath, 5 idle.", m.phase);
  add("acks_expected", "gauge", "Acks expected in the phase waited for.", m.expected);
  add("acks", "gauge", "Acks counted in the phase waited for.", m.acked);
  add("waiting_ports", "gauge", "Ports still expected to ack.", m.waiting.size());
  add("pending", "gauge", "1 if a reroute request waits for the next epoch.", m.pending ? 1 : 0);
  add("last_epoch", "gauge", "The last finished epoch.", m.last_epoch);
  add("epochs_started_total", "counter", "Epochs started since OpenSM started.", m.epochs_started);
  add("acks_ignored_total", "counter", "Malformed, forged or stale acks ignored.", m.acks_ignored);
  out +=
      "# HELP sar_filterd_migration_last_outcome How the last epoch ended (1 = this one).\n"
      "# TYPE sar_filterd_migration_last_outcome gauge\n";
  for (const char* o : kOutcomes) {
    out += fmt::format("sar_filterd_migration_last_outcome{{outcome=\"{}\"}} {}\n", o,
                       m.last_outcome == o ? 1 : 0);
  }
  out +=
      "# HELP sar_filterd_migration_last_phase_seconds The last epoch's phase durations.\n"
      "# TYPE sar_filterd_migration_last_phase_seconds gauge\n";
  for (const char* p : {"plan", "drain", "push", "repath", "total"}) {
    auto it = m.last_ms.find(p);
    out += fmt::format("sar_filterd_migration_last_phase_seconds{{phase=\"{}\"}} {}\n", p,
                       it == m.last_ms.end() ? 0.0 : it->second / 1e3);
  }
  return out;
}

}  // namespace sar::filterd
