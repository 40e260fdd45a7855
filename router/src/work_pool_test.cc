// WorkPool (work_pool.h): every item of every job runs exactly once and has returned when Run
// returns, worker indices are stable per thread, workers that went to sleep wake for the next
// job, an exception in any worker reaches the caller, and the pool is destroyed cleanly while
// idle. The jobs that must see every worker wait inside an item until all workers hold one, so
// they pass only if each worker thread takes part.
#include "work_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sar::internal {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// A job of `workers` items, each of which waits (up to 20 s) until all of them have started:
// it can only finish if every worker runs one item at the same time. Returns the thread of
// each worker index.
std::vector<std::thread::id> RendezvousJob(WorkPool* pool) {
  const int n = pool->workers();
  std::atomic<int> arrived{0};
  std::vector<std::thread::id> thread_of(n);
  std::vector<int> items_of(n, 0);
  pool->Run(n, [&](int w, size_t) {
    thread_of[w] = std::this_thread::get_id();
    ++items_of[w];
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  EXPECT_EQ(arrived.load(), n);
  for (int w = 0; w < n; ++w) EXPECT_EQ(items_of[w], 1) << "worker " << w;
  return thread_of;
}

TEST(WorkPool, EveryItemRunsOnceAndHasReturnedWhenRunReturns) {
  for (int workers : {1, 2, 3, 5}) {
    SCOPED_TRACE(workers);
    WorkPool pool(workers);
    ASSERT_EQ(pool.workers(), workers);
    std::vector<std::atomic<int>> count(3000);
    std::atomic<int> bad_worker{0};
    const std::thread::id caller = std::this_thread::get_id();
    for (int job = 0; job < 2000; ++job) {
      const size_t items = job % 7 == 0 ? 3000 : 1 + job % 97;  // large and small, back to back
      for (size_t i = 0; i < items; ++i) count[i].store(0, std::memory_order_relaxed);
      pool.Run(items, [&](int w, size_t i) {
        if (w < 0 || w >= workers || (w == 0) != (std::this_thread::get_id() == caller)) {
          bad_worker.fetch_add(1);
        }
        if (i % 13 == 0) std::this_thread::yield();  // some items slower than others
        count[i].fetch_add(1, std::memory_order_relaxed);
      });
      // No synchronisation beyond Run's: every item's write must be visible here.
      for (size_t i = 0; i < items; ++i) {
        ASSERT_EQ(count[i].load(std::memory_order_relaxed), 1) << "job " << job << " item " << i;
      }
    }
    EXPECT_EQ(bad_worker.load(), 0);
  }
}

TEST(WorkPool, ResultsPerItemDoNotDependOnWhoRanThem) {
  WorkPool pool(3);
  std::vector<uint64_t> out(10000);
  for (int job = 0; job < 50; ++job) {
    pool.Run(out.size(), [&](int, size_t i) { out[i] = i * i + static_cast<uint64_t>(job); });
    uint64_t sum = 0, want = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      sum += out[i];
      want += i * i + static_cast<uint64_t>(job);
    }
    ASSERT_EQ(sum, want);
  }
}

TEST(WorkPool, WorkerIndicesStayWithTheirThreads) {
  WorkPool pool(4);
  const std::vector<std::thread::id> first = RendezvousJob(&pool);
  EXPECT_EQ(first[0], std::this_thread::get_id());
  EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(), 4u);
  for (int job = 0; job < 20; ++job) EXPECT_EQ(RendezvousJob(&pool), first) << "job " << job;
  // And in ordinary jobs: one thread per index.
  std::map<int, std::set<std::thread::id>> seen;
  std::mutex mu;
  for (int job = 0; job < 200; ++job) {
    pool.Run(64, [&](int w, size_t) {
      std::lock_guard<std::mutex> lock(mu);
      seen[w].insert(std::this_thread::get_id());
    });
  }
  for (const auto& [w, ids] : seen) {
    ASSERT_EQ(ids.size(), 1u) << "worker " << w;
    EXPECT_EQ(*ids.begin(), first[w]) << "worker " << w;
  }
}

TEST(WorkPool, OneWorkerRunsEverythingOnTheCaller) {
  WorkPool pool(1);
  std::vector<int> order;
  const std::thread::id caller = std::this_thread::get_id();
  pool.Run(5, [&](int w, size_t i) {
    EXPECT_EQ(w, 0);
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(static_cast<int>(i));
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  pool.Run(0, [&](int, size_t) { order.push_back(-1); });
  EXPECT_EQ(order.size(), 5u);
}

TEST(WorkPool, SleepingWorkersWakeForTheNextJob) {
  // Idle far longer than the spin, so every worker sleeps on the condition variable before
  // each job; the rendezvous needs all of them.
  WorkPool pool(3, microseconds(5));
  const std::vector<std::thread::id> first = RendezvousJob(&pool);
  for (int job = 0; job < 10; ++job) {
    std::this_thread::sleep_for(milliseconds(job % 2 == 0 ? 5 : 30));
    EXPECT_EQ(RendezvousJob(&pool), first) << "job " << job;
  }
  // The caller sleeps too when an item runs long (longer than the spin).
  std::atomic<int> done{0};
  pool.Run(3, [&](int, size_t i) {
    if (i == 2) std::this_thread::sleep_for(milliseconds(20));
    done.fetch_add(1);
  });
  EXPECT_EQ(done.load(), 3);
}

TEST(WorkPool, DestroyedWhileIdle) {
  for (int round = 0; round < 20; ++round) {
    auto pool = std::make_unique<WorkPool>(3, microseconds(round % 2 == 0 ? 1 : 1000));
    if (round % 3 != 0) {  // some never ran a job
      std::atomic<int> n{0};
      pool->Run(100, [&](int, size_t) { n.fetch_add(1); });
      EXPECT_EQ(n.load(), 100);
    }
    if (round % 4 == 0) std::this_thread::sleep_for(milliseconds(3));  // asleep by now
    pool.reset();  // must return: joins spinning and sleeping workers alike
  }
}

TEST(WorkPool, AnExceptionInAWorkerReachesTheCaller) {
  WorkPool pool(3);
  std::atomic<int> arrived{0};
  const auto wait_all = [&] {
    arrived.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < 3 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  };
  // Item run by worker 2 (not the caller) throws, after every worker holds an item.
  std::atomic<bool> still_running{false};
  try {
    pool.Run(3, [&](int w, size_t) {
      wait_all();
      if (w == 2) throw std::runtime_error("item failed in worker 2");
      if (w == 1) {
        still_running = true;
        std::this_thread::sleep_for(milliseconds(20));
        still_running = false;
      }
    });
    ADD_FAILURE() << "Run did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "item failed in worker 2");
    EXPECT_FALSE(still_running.load()) << "Run rethrew before worker 1's item returned";
  }
  EXPECT_EQ(arrived.load(), 3);
  // The items after a failure are skipped (1,000 items of 1 ms would take 0.5 s on 2 workers);
  // the pool stays usable.
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.Run(1000,
                        [&](int, size_t i) {
                          ran.fetch_add(1);
                          if (i == 0) throw std::logic_error("first item");
                          std::this_thread::sleep_for(milliseconds(1));
                        }),
               std::logic_error);
  EXPECT_LT(ran.load(), 1000);
  std::atomic<int> n{0};
  pool.Run(500, [&](int, size_t) { n.fetch_add(1); });
  EXPECT_EQ(n.load(), 500);
  // One worker: the exception passes straight through.
  WorkPool single(1);
  EXPECT_THROW(single.Run(3, [](int, size_t) { throw std::out_of_range("x"); }), std::out_of_range);
}

}  // namespace
}  // namespace sar::internal
