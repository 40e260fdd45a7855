#include "slurm_json.h"

#include <nlohmann/json.hpp>

#include "admin_comment.h"
#include "hostlist.h"

namespace sar::filterd {

Status ParseSlurmJobsJson(std::string_view text, std::vector<SourceJob>* out) {
  out->clear();
  // parse(..., allow_exceptions = false): a bad reply is a value, not an exception.
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Corruption("jobs reply: not JSON: '" + std::string(text.substr(0, 80)) + "'");
  }
  if (auto e = doc.find("errors"); e != doc.end() && e->is_array() && !e->empty()) {
    return Status::IOError("jobs reply: SLURM reports errors: " + e->dump().substr(0, 300));
  }
  auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) return Status::Corruption("jobs reply: no \"jobs\"");
  for (const nlohmann::json& j : *jobs) {
    if (!j.is_object()) return Status::Corruption("jobs reply: a job is not an object");
    const std::string state = j.value("job_state", "");
    if (state != "RUNNING" && state != "CONFIGURING") continue;
    SourceJob job;
    auto id = j.find("job_id");
    if (id == j.end() || !id->is_number_integer()) {
      return Status::Corruption("jobs reply: a running job without job_id");
    }
    job.id = std::to_string(id->get<int64_t>());
    job.partition = j.value("partition", "");
    // 22.05 prints INFINITE (0xFFFFFFFF) for no limit.
    if (auto t = j.find("time_limit"); t != j.end() && t->is_number_integer()) {
      const int64_t v = t->get<int64_t>();
      job.time_limit_min = v >= 0xFFFFFFFEll ? -1 : v;
    }
    // Absent or null when the job has none.
    if (auto c = j.find("admin_comment"); c != j.end() && c->is_string()) {
      job.pattern = PatternFromAdminComment(c->get<std::string>());
    }
    const std::string nodes = j.value("nodes", "");
    if (nodes.empty())
      return Status::Corruption("jobs reply: running job " + job.id + " has no nodes");
    SAR_RETURN_IF_ERROR(ExpandHostlist(nodes, &job.hosts));
    out->push_back(std::move(job));
  }
  return Status::OK();
}

}  // namespace sar::filterd
