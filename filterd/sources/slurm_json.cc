#include "sources/slurm_json.h"

#include <nlohmann/json.hpp>

#include "sources/admin_comment.h"
#include "sources/hostlist.h"

namespace sar::filterd {
namespace {

using Json = nlohmann::json;

// v0.0.38 prints INFINITE (0xFFFFFFFF) for no limit; NO_VAL (0xFFFFFFFE) likewise means none.
constexpr int64_t kSlurmNoVal = 0xFFFFFFFEll;

const char* TypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a fractional number";
    default:
      return "not a value";
  }
}

// Every field error names the job (by index until its id is known) and the field, so an
// operator can find the entry in `squeue --json` at once.
class JobReader {
 public:
  JobReader(const Json& job, size_t index) : job_(job), who_("job #" + std::to_string(index)) {}

  Status Wrong(const char* field, const Json& v, const char* expected) const {
    return Status::Corruption("jobs reply: " + who_ + ": '" + field + "' is " + TypeName(v) +
                              ", expected " + expected);
  }
  const Json* Find(const char* field) const {
    auto it = job_.find(field);
    return it == job_.end() ? nullptr : &*it;
  }

  Status Id(std::string* out) {
    const Json* v = Find("job_id");
    if (v == nullptr) return Status::Corruption("jobs reply: " + who_ + ": no 'job_id'");
    if (!v->is_number_integer() || v->get<int64_t>() < 0) {
      return Wrong("job_id", *v, "a non-negative integer");
    }
    *out = std::to_string(v->get<int64_t>());
    who_ = "job " + *out;
    return Status::OK();
  }

  // v0.0.38: "RUNNING". v0.0.39+: ["RUNNING"] or ["RUNNING", "CONFIGURING"] (base state and
  // flags). A job holds its nodes while RUNNING or CONFIGURING.
  Status HoldsNodes(bool* out) const {
    const Json* v = Find("job_state");
    if (v == nullptr) return Status::Corruption("jobs reply: " + who_ + ": no 'job_state'");
    auto holds = [](const std::string& s) { return s == "RUNNING" || s == "CONFIGURING"; };
    *out = false;
    if (v->is_string()) {
      *out = holds(v->get_ref<const std::string&>());
      return Status::OK();
    }
    if (!v->is_array() || v->empty()) return Wrong("job_state", *v, "a string or strings");
    for (const Json& s : *v) {
      if (!s.is_string()) return Wrong("job_state[]", s, "a string");
      *out = *out || holds(s.get_ref<const std::string&>());
    }
    return Status::OK();
  }

  // Absent means none; every other field read below is typed exactly.
  Status OptionalString(const char* field, bool null_ok, std::string* out) const {
    const Json* v = Find(field);
    if (v == nullptr || (null_ok && v->is_null())) return Status::OK();
    if (!v->is_string()) return Wrong(field, *v, null_ok ? "a string or null" : "a string");
    *out = v->get<std::string>();
    return Status::OK();
  }

  // v0.0.38: minutes, or 0xFFFFFFFF for INFINITE. v0.0.39+: {"set": b, "infinite": b,
  // "number": minutes}.
  Status TimeLimit(int64_t* out) const {
    const Json* v = Find("time_limit");
    if (v == nullptr) return Status::OK();
    if (v->is_number_integer()) {
      const int64_t n = v->get<int64_t>();
      *out = n >= kSlurmNoVal || n < 0 ? -1 : n;
      return Status::OK();
    }
    if (!v->is_object()) return Wrong("time_limit", *v, "an integer or {set, infinite, number}");
    for (const char* flag : {"set", "infinite"}) {
      auto f = v->find(flag);
      if (f != v->end() && !f->is_boolean()) {
        return Wrong((std::string("time_limit.") + flag).c_str(), *f, "a boolean");
      }
    }
    auto number = v->find("number");
    if (number != v->end() && !number->is_number_integer()) {
      return Wrong("time_limit.number", *number, "an integer");
    }
    const bool set = v->value("set", number != v->end());
    const bool infinite = v->value("infinite", false);
    *out = !set || infinite || number == v->end() ? -1 : number->get<int64_t>();
    if (*out >= kSlurmNoVal) *out = -1;
    return Status::OK();
  }

  const std::string& who() const { return who_; }

 private:
  const Json& job_;
  std::string who_;
};

// A running job as read, its host list counted but not yet expanded.
struct PendingJob {
  SourceJob job;
  std::string nodes;
};

Status ParseJob(const Json& j, size_t index, std::vector<PendingJob>* out, size_t* hosts) {
  if (!j.is_object()) {
    return Status::Corruption("jobs reply: job #" + std::to_string(index) + " is " + TypeName(j) +
                              ", expected an object");
  }
  JobReader r(j, index);
  PendingJob p;
  SourceJob& job = p.job;
  SAR_RETURN_IF_ERROR(r.Id(&job.id));
  bool holds = false;
  SAR_RETURN_IF_ERROR(r.HoldsNodes(&holds));
  if (!holds) return Status::OK();
  SAR_RETURN_IF_ERROR(r.OptionalString("partition", false, &job.partition));
  SAR_RETURN_IF_ERROR(r.TimeLimit(&job.time_limit_min));
  std::string comment;  // absent or null when the job has none
  SAR_RETURN_IF_ERROR(r.OptionalString("admin_comment", true, &comment));
  job.pattern = PatternFromAdminComment(comment);
  SAR_RETURN_IF_ERROR(r.OptionalString("nodes", false, &p.nodes));
  if (p.nodes.empty()) {
    return Status::Corruption("jobs reply: " + r.who() + ": running, no 'nodes'");
  }
  // Counted only: no name is made before the whole reply's count is known (below).
  if (Status s = CountHostlist(p.nodes, hosts); !s.ok()) {
    return Status::Corruption("jobs reply: " + r.who() + ": 'nodes': " + s.message());
  }
  out->push_back(std::move(p));
  return Status::OK();
}

}  // namespace

Status ParseSlurmJobsJson(std::string_view text, std::vector<SourceJob>* out,
                          size_t max_reply_hosts) {
  out->clear();
  // parse(..., allow_exceptions = false): a bad reply is a value, not an exception. Every
  // access below checks the type first; the catch is for what a future edit forgets.
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::Corruption("jobs reply: not JSON: '" + std::string(text.substr(0, 80)) + "'");
  }
  try {
    if (auto e = doc.find("errors"); e != doc.end()) {
      if (!e->is_array()) {
        return Status::Corruption(std::string("jobs reply: 'errors' is ") + TypeName(*e) +
                                  ", expected an array");
      }
      if (!e->empty()) {
        return Status::IOError("jobs reply: SLURM reports errors: " + e->dump().substr(0, 300));
      }
    }
    auto jobs = doc.find("jobs");
    if (jobs == doc.end()) return Status::Corruption("jobs reply: no \"jobs\"");
    if (!jobs->is_array()) {
      return Status::Corruption(std::string("jobs reply: 'jobs' is ") + TypeName(*jobs) +
                                ", expected an array");
    }
    // Every job is read and its hosts counted first; only a reply whose jobs name at most
    // max_reply_hosts hosts in all is expanded (issue 34 defect 6: 100 jobs of h[00000-49000],
    // 6 KB of JSON, each under the per-job cap, cost 24 s and 0.9 GB).
    std::vector<PendingJob> pending;
    size_t total = 0;
    for (size_t i = 0; i < jobs->size(); ++i) {
      size_t hosts = 0;
      SAR_RETURN_IF_ERROR(ParseJob((*jobs)[i], i, &pending, &hosts));
      total += hosts;  // each count is at most kMaxHostlistHosts: no overflow before the check
      if (total > max_reply_hosts) {
        return Status::Corruption(
            "jobs reply: the running jobs name more than " + std::to_string(max_reply_hosts) +
            " hosts in all (" + std::to_string(total) + " up to job #" + std::to_string(i) +
            " of " + std::to_string(jobs->size()) + "); reply refused, nothing expanded");
      }
    }
    out->reserve(pending.size());
    for (PendingJob& p : pending) {
      if (Status s = ExpandHostlist(p.nodes, &p.job.hosts); !s.ok()) {
        out->clear();
        return Status::Corruption("jobs reply: job " + p.job.id + ": 'nodes': " + s.message());
      }
      out->push_back(std::move(p.job));
    }
  } catch (const std::exception& e) {
    out->clear();
    return Status::Corruption(std::string("jobs reply: ") + e.what());
  }
  return Status::OK();
}

}  // namespace sar::filterd
