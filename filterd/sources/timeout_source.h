// Puts a deadline on a job source that has none of its own (libslurm blocks for SLURM's
// MessageTimeout, per attempt, on a controller that accepts connections but does not answer).
// The inner source runs on one worker thread; Poll() waits at most `timeout_s` for it. A poll
// that overruns is abandoned (its answer is dropped when it arrives) and, while it still runs,
// later polls fail at once instead of stacking up calls into a library that is not reentrant.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "sources/job_source.h"

namespace sar::filterd {

class TimeoutSource : public JobSource {
 public:
  TimeoutSource(std::unique_ptr<JobSource> inner, double timeout_s);
  ~TimeoutSource() override;

  const char* name() const override { return inner_->name(); }
  Status Poll(std::vector<SourceJob>* out) override;
  Status ListNodes(std::vector<std::string>* out) override;

 private:
  enum class Task { kNone, kPoll, kListNodes };
  Status Run(Task task, std::vector<SourceJob>* jobs, std::vector<std::string>* nodes);
  void Worker();

  std::unique_ptr<JobSource> inner_;
  const double timeout_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  Task task_ = Task::kNone;  // guarded by mu_: the request the worker should run
  bool busy_ = false;        // guarded by mu_: the worker is inside inner_
  uint64_t generation_ = 0;  // guarded by mu_: which request the result belongs to
  uint64_t done_generation_ = 0;
  Status result_;
  std::vector<SourceJob> jobs_;
  std::vector<std::string> nodes_;
  bool stop_ = false;
  std::thread worker_;  // last: started after every field it uses
};

}  // namespace sar::filterd
