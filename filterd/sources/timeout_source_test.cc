#include "sources/timeout_source.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace sar::filterd {
namespace {

// A source whose next call takes `delay_ms`, like a controller that hangs.
class SlowSource : public JobSource {
 public:
  explicit SlowSource(std::atomic<int>* delay_ms) : delay_ms_(delay_ms) {}
  const char* name() const override { return "slow"; }
  Status Poll(std::vector<SourceJob>* out) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_->load()));
    out->push_back({std::to_string(++calls_), "", -1, {"n1"}});
    return Status::OK();
  }

 private:
  std::atomic<int>* delay_ms_;
  int calls_ = 0;
};

TEST(TimeoutSource, AnswersInTimePassThrough) {
  std::atomic<int> delay{0};
  TimeoutSource src(std::make_unique<SlowSource>(&delay), 2.0);
  std::vector<SourceJob> jobs;
  ASSERT_TRUE(src.Poll(&jobs).ok());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "1");
}

TEST(TimeoutSource, HangingCallTimesOutAndIsNotStacked) {
  std::atomic<int> delay{600};
  TimeoutSource src(std::make_unique<SlowSource>(&delay), 0.1);
  std::vector<SourceJob> jobs;
  const auto t0 = std::chrono::steady_clock::now();
  Status s = src.Poll(&jobs);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no answer within"), std::string::npos) << s.message();
  EXPECT_TRUE(jobs.empty()) << "a timed-out poll must not return data";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  // Still inside the first call: fail at once rather than queue a second one.
  s = src.Poll(&jobs);
  EXPECT_NE(s.message().find("previous call"), std::string::npos) << s.message();
  // Once the hung call returns, polling works again, and the stale answer is not reused.
  delay = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ASSERT_TRUE(src.Poll(&jobs).ok());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "2");
}

}  // namespace
}  // namespace sar::filterd
