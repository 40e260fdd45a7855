#include "sources/slurm_source.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include <cstdlib>

#include "sources/admin_comment.h"
#include "sources/hostlist.h"    // kMaxHostlistHosts
#include "sources/slurm_json.h"  // kMaxReplyHosts

namespace sar::filterd {
namespace {

class SlurmSource : public JobSource {
 public:
  explicit SlurmSource(const std::string& conf) {
    // libslurm reads SLURM_CONF at init; without it it would look the controller up in DNS.
    slurm_init(conf.empty() ? nullptr : conf.c_str());
  }
  ~SlurmSource() override { slurm_fini(); }

  const char* name() const override { return "libslurm"; }

  Status Poll(std::vector<SourceJob>* out) override {
    out->clear();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
      return Status::IOError(std::string("slurm_load_jobs: ") + slurm_strerror(slurm_get_errno()));
    }
    // The same bounds as the JSON sources (slurm_json.h): per job, and for the whole answer,
    // counted before any host name is made (issue 34 defect 6).
    size_t total = 0;
    for (uint32_t i = 0; i < msg->record_count; ++i) {
      const slurm_job_info_t& j = msg->job_array[i];
      if ((j.job_state & JOB_STATE_BASE) != JOB_RUNNING || j.nodes == nullptr) continue;
      hostlist_t hl = slurm_hostlist_create(j.nodes);  // ranges, not names: cheap
      const int hosts = hl == nullptr ? 0 : slurm_hostlist_count(hl);
      if (hl != nullptr) slurm_hostlist_destroy(hl);
      total += hosts > 0 ? static_cast<size_t>(hosts) : 0;
      const bool job_too_big = hosts > static_cast<int>(kMaxHostlistHosts);
      if (job_too_big || total > kMaxReplyHosts) {
        Status s = Status::Corruption(
            "slurm_load_jobs: " +
            (job_too_big ? "job " + std::to_string(j.job_id) + " names more than " +
                               std::to_string(kMaxHostlistHosts) + " hosts"
                         : "the running jobs name more than " + std::to_string(kMaxReplyHosts) +
                               " hosts in all") +
            "; answer refused, nothing expanded");
        slurm_free_job_info_msg(msg);
        return s;
      }
    }
    for (uint32_t i = 0; i < msg->record_count; ++i) {
      const slurm_job_info_t& j = msg->job_array[i];
      if ((j.job_state & JOB_STATE_BASE) != JOB_RUNNING || j.nodes == nullptr) continue;
      SourceJob job;
      job.id = std::to_string(j.job_id);
      if (j.partition != nullptr) job.partition = j.partition;
      job.time_limit_min = j.time_limit == INFINITE ? -1 : static_cast<int64_t>(j.time_limit);
      if (j.admin_comment != nullptr) job.pattern = PatternFromAdminComment(j.admin_comment);
      hostlist_t hl = slurm_hostlist_create(j.nodes);
      if (hl == nullptr) {
        slurm_free_job_info_msg(msg);
        return Status::Corruption("job " + job.id + ": bad node list '" + j.nodes + "'");
      }
      while (char* host = slurm_hostlist_shift(hl)) {
        job.hosts.emplace_back(host);
        free(host);  // NOLINT: libslurm allocates with malloc
      }
      slurm_hostlist_destroy(hl);
      out->push_back(std::move(job));
    }
    slurm_free_job_info_msg(msg);
    return Status::OK();
  }

  Status ListNodes(std::vector<std::string>* out) override {
    node_info_msg_t* msg = nullptr;
    if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
      return Status::IOError(std::string("slurm_load_node: ") + slurm_strerror(slurm_get_errno()));
    }
    for (uint32_t i = 0; i < msg->record_count; ++i) {
      if (msg->node_array[i].name != nullptr) out->emplace_back(msg->node_array[i].name);
    }
    slurm_free_node_info_msg(msg);
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<JobSource> MakeSlurmSource(const std::string& slurm_conf) {
  return std::make_unique<SlurmSource>(slurm_conf);
}

}  // namespace sar::filterd
