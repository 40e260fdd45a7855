// The consumers' socket with real UNIX sockets: libsarmig's C API on one side, ConsumerHub on
// the other (polled on its own thread, as in sar-agent).
#include "consumer_hub.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <thread>

#include "sar/migration.h"

namespace sarmig {
namespace {

class HubTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sarmig-hub-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    HubConfig c;
    c.path = dir_ + "/m.sock";
    c.hello_timeout = Ms(500);
    c.line_timeout = Ms(500);
    c.max_consumers = 8;
    hub_ = std::make_unique<ConsumerHub>(c, &log_);
    std::string err;
    ASSERT_TRUE(hub_->Listen(&err)) << err;
    poller_ = std::thread([this] {
      while (!stop_) {
        auto r = hub_->Poll(50);
        if (r.empty()) continue;
        std::lock_guard<std::mutex> lock(mu_);
        for (auto& x : r) results_.push_back(x);
        cv_.notify_all();
      }
    });
  }
  void TearDown() override {
    stop_ = true;
    hub_->Wake();
    poller_.join();
    hub_.reset();
    rmdir(dir_.c_str());
  }
  std::string Path() const { return dir_ + "/m.sock"; }

  // Waits for the next phase result (or fails after `ms`).
  bool NextResult(PhaseResult* out, int ms) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, Ms(ms), [this] { return !results_.empty(); })) return false;
    *out = results_.front();
    results_.erase(results_.begin());
    return true;
  }

  int RawConnect() {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, Path().c_str(), sizeof(a.sun_path) - 1);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  }

  void WaitRegistered(size_t n) {
    for (int i = 0; i < 100 && hub_->registered() != n; i++) usleep(10000);
    ASSERT_EQ(hub_->registered(), n);
  }

  Logger log_{nullptr};
  std::string dir_;
  std::unique_ptr<ConsumerHub> hub_;
  std::thread poller_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PhaseResult> results_;
};

// A consumer on its own thread that answers every order (or never, if mute).
struct Consumer {
  Consumer(const std::string& path, const char* name, bool mute) : mute_(mute) {
    char* err = nullptr;
    c_ = sar_mig_connect(path.c_str(), name, 1000, &err);
    EXPECT_NE(c_, nullptr) << (err ? err : "");
    sar_mig_free(err);
    th_ = std::thread([this] {
      while (!stop_ && c_) {
        if (sar_mig_dispatch(c_, 20, &Consumer::OnEvent, this, nullptr) < 0) break;
      }
    });
  }
  ~Consumer() {
    stop_ = true;
    th_.join();
    sar_mig_close(c_);
  }
  static void OnEvent(void* user, sar_mig_event_t ev, uint32_t epoch, uint32_t, uint32_t) {
    auto* self = static_cast<Consumer*>(user);
    self->events++;
    self->last_event = ev;
    if (!self->mute_) sar_mig_drained(self->c_, epoch, ev, nullptr);
  }
  bool mute_;
  sar_mig_client_t* c_ = nullptr;
  std::thread th_;
  std::atomic<bool> stop_{false};
  std::atomic<int> events{0};
  std::atomic<int> last_event{0};
};

TEST_F(HubTest, SocketIsOwnerOnly) {
  struct stat st {};
  ASSERT_EQ(stat(Path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(HubTest, NoConsumersFinishesAtOnce) {
  hub_->StartPhase(PhaseOrder{1, 2, false, Ms(1000)});
  PhaseResult r;
  ASSERT_TRUE(NextResult(&r, 500));
  EXPECT_EQ(r.epoch, 1u);
  EXPECT_EQ(r.consumers, 0);
  EXPECT_FALSE(r.late);
}

TEST_F(HubTest, AllConsumersAnswerThenMoveBack) {
  Consumer a(Path(), "mpi-a", false), b(Path(), "mpi-b", false);
  WaitRegistered(2);
  hub_->StartPhase(PhaseOrder{7, 2, false, Ms(2000)});
  PhaseResult r;
  ASSERT_TRUE(NextResult(&r, 1000));
  EXPECT_EQ(r.epoch, 7u);
  EXPECT_EQ(r.phase, 2);
  EXPECT_EQ(r.consumers, 2);
  EXPECT_EQ(r.drained, 2);
  EXPECT_FALSE(r.late);
  EXPECT_EQ(a.last_event, SAR_MIG_MOVE_HIGH);
  hub_->StartPhase(PhaseOrder{7, 4, false, Ms(2000)});
  ASSERT_TRUE(NextResult(&r, 1000));
  EXPECT_EQ(r.phase, 4);
  EXPECT_EQ(r.drained, 2);
  EXPECT_EQ(b.last_event, SAR_MIG_MOVE_BACK);
}

TEST_F(HubTest, SilentConsumerMakesThePhaseLateNotStuck) {
  Consumer a(Path(), "good", false), mute(Path(), "mute", true);
  WaitRegistered(2);
  auto t0 = Clock::now();
  hub_->StartPhase(PhaseOrder{3, 2, false, Ms(300)});
  PhaseResult r;
  ASSERT_TRUE(NextResult(&r, 2000));
  auto took = std::chrono::duration_cast<Ms>(Clock::now() - t0).count();
  EXPECT_TRUE(r.late);
  EXPECT_EQ(r.consumers, 2);
  EXPECT_EQ(r.drained, 1);
  EXPECT_GE(took, 290);
  EXPECT_LT(took, 1000);
  EXPECT_EQ(mute.events, 1);
}

TEST_F(HubTest, OneByteASecondCannotDelayAPhase) {
  Consumer a(Path(), "good", false);
  WaitRegistered(1);
  int slow = RawConnect();
  ASSERT_EQ(send(slow, "H", 1, 0), 1);  // starts a HELLO it will not finish in time
  auto t0 = Clock::now();
  hub_->StartPhase(PhaseOrder{4, 2, false, Ms(5000)});
  PhaseResult r;
  ASSERT_TRUE(NextResult(&r, 1000));
  EXPECT_LT(std::chrono::duration_cast<Ms>(Clock::now() - t0).count(), 200);
  EXPECT_EQ(r.consumers, 1);  // the unregistered one is not waited for
  EXPECT_FALSE(r.late);
  // A registered consumer that dribbles a partial line is dropped after line_timeout.
  int dribble = RawConnect();
  std::string hello = "HELLO 1 dribbler\n";
  ASSERT_EQ(send(dribble, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  WaitRegistered(2);
  ASSERT_EQ(send(dribble, "D", 1, 0), 1);
  for (int i = 0; i < 100 && hub_->registered() != 1; i++) usleep(20000);
  EXPECT_EQ(hub_->registered(), 1u);
  char buf[256];
  ssize_t n = recv(slow, buf, sizeof(buf), 0);  // closed by the HELLO deadline
  EXPECT_EQ(n, 0);
  close(slow);
  close(dribble);
}

TEST_F(HubTest, GarbageAndOverlongLinesDisconnect) {
  int junk = RawConnect();
  ASSERT_GT(send(junk, "GET / HTTP/1.0\n", 15, 0), 0);
  int big = RawConnect();
  std::string line(4096, 'x');
  send(big, line.data(), line.size(), MSG_NOSIGNAL);
  char buf[64];
  EXPECT_EQ(recv(junk, buf, sizeof(buf), 0), 0);
  EXPECT_LE(recv(big, buf, sizeof(buf), 0), 0);
  EXPECT_EQ(hub_->registered(), 0u);
  close(junk);
  close(big);
  // A bad name is refused by libsarmig itself.
  char* err = nullptr;
  EXPECT_EQ(sar_mig_connect(Path().c_str(), "bad name", 500, &err), nullptr);
  ASSERT_NE(err, nullptr);
  sar_mig_free(err);
}

TEST_F(HubTest, ConnectionCap) {
  std::vector<int> fds;
  for (int i = 0; i < 12; i++) fds.push_back(RawConnect());
  usleep(200000);
  int closed = 0;
  for (int fd : fds) {
    char b;
    if (recv(fd, &b, 1, MSG_DONTWAIT) == 0) closed++;
    close(fd);
  }
  EXPECT_EQ(closed, 4);  // 12 - max_consumers 8
}

TEST_F(HubTest, LateRegistrantLearnsTheCurrentMode) {
  hub_->StartPhase(PhaseOrder{9, 2, false, Ms(1000)});
  PhaseResult r;
  ASSERT_TRUE(NextResult(&r, 500));
  Consumer late(Path(), "late", false);
  for (int i = 0; i < 100 && late.events == 0; i++) usleep(10000);
  EXPECT_EQ(late.events, 1);
  EXPECT_EQ(late.last_event, SAR_MIG_MOVE_HIGH);
}

TEST(LibSarMigTest, NoAgentIsAClearError) {
  char* err = nullptr;
  EXPECT_EQ(sar_mig_connect("/nonexistent/sock", "x", 100, &err), nullptr);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("/nonexistent/sock"), std::string::npos);
  sar_mig_free(err);
  EXPECT_EQ(sar_mig_dispatch(nullptr, 0, nullptr, nullptr, nullptr), -1);
}

}  // namespace
}  // namespace sarmig
