#include "sources/timeout_source.h"

#include <chrono>

namespace sar::filterd {

TimeoutSource::TimeoutSource(std::unique_ptr<JobSource> inner, double timeout_s)
    : inner_(std::move(inner)), timeout_s_(timeout_s), worker_([this] { Worker(); }) {}

TimeoutSource::~TimeoutSource() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // A call stuck in the inner source ends with SLURM's own timeout; waiting for it at shutdown
  // is the price of never running two calls at once.
  worker_.join();
}

void TimeoutSource::Worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || task_ != Task::kNone; });
    if (stop_) return;
    const Task task = task_;
    const uint64_t generation = generation_;
    task_ = Task::kNone;
    busy_ = true;
    lock.unlock();
    std::vector<SourceJob> jobs;
    std::vector<std::string> nodes;
    Status s = task == Task::kPoll ? inner_->Poll(&jobs) : inner_->ListNodes(&nodes);
    lock.lock();
    busy_ = false;
    result_ = std::move(s);
    jobs_ = std::move(jobs);
    nodes_ = std::move(nodes);
    done_generation_ = generation;
    cv_.notify_all();
  }
}

Status TimeoutSource::Run(Task task, std::vector<SourceJob>* jobs,
                          std::vector<std::string>* nodes) {
  std::unique_lock<std::mutex> lock(mu_);
  if (busy_) {
    return Status::IOError(std::string(inner_->name()) + ": the previous call has not returned");
  }
  task_ = task;
  const uint64_t generation = ++generation_;
  cv_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s_));
  if (!cv_.wait_until(lock, deadline, [&] { return done_generation_ == generation; })) {
    return Status::IOError(std::string(inner_->name()) + ": no answer within " +
                           std::to_string(timeout_s_) + " s");
  }
  if (jobs) *jobs = std::move(jobs_);
  if (nodes) *nodes = std::move(nodes_);
  return result_;
}

Status TimeoutSource::Poll(std::vector<SourceJob>* out) {
  out->clear();
  return Run(Task::kPoll, out, nullptr);
}

Status TimeoutSource::ListNodes(std::vector<std::string>* out) {
  return Run(Task::kListNodes, nullptr, out);
}

}  // namespace sar::filterd
