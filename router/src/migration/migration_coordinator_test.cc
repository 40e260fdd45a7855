#include "sar/migration/migration_coordinator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sar/migration/migration_wire.h"
#include "test_fabrics.h"

namespace sar {
namespace {

const PortGid kA{0xfe80000000000000, 0x11}, kB{0xfe80000000000000, 0x12},
    kC{0xfe80000000000000, 0x13}, kStranger{0xfe80000000000000, 0x99};

// The actions queued since the last call, logs left out (kept in *logs if given).
std::vector<MigAction> Drain(MigrationCoordinator* c, std::vector<std::string>* logs = nullptr) {
  std::vector<MigAction> v;
  for (MigAction a; c->PopAction(&a);) {
    if (a.kind == MigAction::kLog) {
      if (logs) logs->push_back(a.text);
    } else {
      v.push_back(a);
    }
  }
  return v;
}

std::vector<MigAction::Kind> Kinds(const std::vector<MigAction>& v) {
  std::vector<MigAction::Kind> k;
  for (const MigAction& a : v) k.push_back(a.kind);
  return k;
}

AckResult AckOf(MigrationCoordinator* c, uint64_t now, const PortGid& g, uint8_t phase) {
  return c->Ack(now, g, SAR_MIG_ACK, phase, c->epoch());
}

MigrationConfig Config() {
  MigrationConfig cfg;
  cfg.ack_timeout_ms = 100;
  cfg.repath_timeout_ms = 50;
  cfg.push_timeout_ms = 1000;
  cfg.exclude_after = 2;
  return cfg;
}

TEST(MigrationCoordinator, FivePhasesInOrder) {
  MigrationCoordinator c(Config());
  c.Request(1000);
  std::vector<MigAction> a = Drain(&c);
  ASSERT_EQ(Kinds(a), std::vector<MigAction::Kind>{MigAction::kPlan});
  EXPECT_EQ(a[0].epoch, 1u);
  EXPECT_TRUE(c.Holding());
  c.Planned(1010, 1, true, true, {kA, kB, kC});
  a = Drain(&c);
  ASSERT_EQ(Kinds(a), std::vector<MigAction::Kind>{MigAction::kSendUnpath});
  EXPECT_EQ(a[0].deadline_ms, 100u);
  EXPECT_EQ(c.phase(), MigPhase::kDrain);
  EXPECT_EQ(AckOf(&c, 1020, kA, 2), AckResult::kCounted);
  EXPECT_EQ(AckOf(&c, 1021, kA, 2), AckResult::kDuplicate);
  EXPECT_EQ(AckOf(&c, 1022, kB, 2), AckResult::kCounted);
  // Two of three: still holding, nothing released.
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_TRUE(c.Holding());
  MigrationStatus st = c.Status();
  EXPECT_EQ(st.acked, 2u);
  EXPECT_EQ(st.expected, 3u);
  ASSERT_EQ(st.waiting.size(), 1u);
  EXPECT_EQ(st.waiting[0], kC);
  EXPECT_EQ(AckOf(&c, 1030, kC, 2), AckResult::kCounted);
  a = Drain(&c);
  ASSERT_EQ(Kinds(a), std::vector<MigAction::Kind>{MigAction::kRelease});
  EXPECT_FALSE(c.Holding());
  EXPECT_EQ(c.phase(), MigPhase::kPush);
  // A routing pass that installed other tables (0: not ours) does not end phase 3.
  c.RoutingDone(1035, 0);
  EXPECT_TRUE(Drain(&c).empty());
  c.RoutingDone(1040, 1);
  a = Drain(&c);
  ASSERT_EQ(Kinds(a), std::vector<MigAction::Kind>{MigAction::kSendRepath});
  EXPECT_EQ(a[0].flags, 0);
  // Phase-2 acks are not RePath acks.
  EXPECT_EQ(AckOf(&c, 1041, kA, 2), AckResult::kWrongPhase);
  for (const PortGid& g : {kA, kB, kC}) EXPECT_EQ(AckOf(&c, 1050, g, 4), AckResult::kCounted);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  st = c.Status();
  EXPECT_EQ(st.last_outcome, "released");
  EXPECT_EQ(st.last_timings.plan_ms, 10u);
  EXPECT_EQ(st.last_timings.drain_ms, 20u);
  EXPECT_EQ(st.last_timings.push_ms, 10u);
  EXPECT_EQ(st.last_timings.repath_ms, 10u);
  EXPECT_EQ(st.last_timings.total_ms, 50u);
  EXPECT_EQ(st.acks_ignored, 2u);
}

TEST(MigrationCoordinator, FirstEpochIsConfigured) {
  MigrationConfig cfg = Config();
  cfg.first_epoch = 1000;
  MigrationCoordinator c(cfg);
  EXPECT_EQ(c.Status().epoch, 999u);
  c.Request(0);
  const std::vector<MigAction> a = Drain(&c);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].epoch, 1000u);
}

TEST(MigrationCoordinator, NoSubscribersReleasesAtOnce) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(5, 1, true, true, {});
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kRelease});
  c.RoutingDone(7, 1);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kSendRepath});
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().last_outcome, "released");
}

TEST(MigrationCoordinator, FailedOrUnchangedPlanKeepsTheTables) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(5, 1, false, true, {kA}, "disconnected");
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kDiscard});
  EXPECT_EQ(c.Status().last_outcome, "plan-failed");
  c.Request(10);
  Drain(&c);
  c.Planned(12, 2, true, false, {kA});
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kDiscard});
  EXPECT_EQ(c.Status().last_outcome, "no-change");
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
}

TEST(MigrationCoordinator, MissingAckAbortsKeepsOldTablesAndExcludesAfterN) {
  MigrationCoordinator c(Config());
  std::vector<std::string> logs;
  for (uint32_t epoch = 1; epoch <= 2; ++epoch) {
    const uint64_t t0 = epoch * 1000;
    c.Request(t0);
    Drain(&c);
    c.Planned(t0, epoch, true, true, {kA, kB});
    Drain(&c);
    EXPECT_EQ(AckOf(&c, t0 + 10, kA, 2), AckResult::kCounted);
    c.Tick(t0 + 99);  // before the deadline: nothing
    EXPECT_TRUE(Drain(&c).empty());
    EXPECT_EQ(c.MsToDeadline(t0 + 99), 1u);
    c.Tick(t0 + 100);
    const std::vector<MigAction> a = Drain(&c, &logs);
    // The plan is dropped (the old tables stay) and everyone is told to stay on them.
    ASSERT_EQ(Kinds(a),
              (std::vector<MigAction::Kind>{MigAction::kDiscard, MigAction::kSendRepath}));
    EXPECT_EQ(a[1].flags, SAR_MIG_FLAG_STAY);
    EXPECT_FALSE(c.Holding());
    EXPECT_EQ(AckOf(&c, t0 + 110, kA, 4), AckResult::kCounted);
    c.Tick(t0 + 150);  // B never answers RePath either
    EXPECT_EQ(c.phase(), MigPhase::kIdle);
    EXPECT_EQ(c.Status().last_outcome, "aborted-timeout");
  }
  bool named_late = false, named_excluded = false;
  for (const std::string& l : logs) {
    named_late |= l.find("late: 0x0000000000000012") != std::string::npos;
    named_excluded |= l.find("excluded after 2") != std::string::npos;
  }
  EXPECT_TRUE(named_late);
  EXPECT_TRUE(named_excluded);
  ASSERT_EQ(c.Status().excluded, std::vector<PortGid>{kB});
  // Epoch 3: B is no longer waited for, A's ack releases.
  c.Request(5000);
  Drain(&c);
  c.Planned(5000, 3, true, true, {kA, kB});
  Drain(&c);
  EXPECT_EQ(c.Status().expected, 1u);
  EXPECT_EQ(AckOf(&c, 5010, kA, 2), AckResult::kCounted);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kRelease});
  // B acks again: not counted, but waited for from the next epoch on.
  c.RoutingDone(5020, 3);
  Drain(&c);
  EXPECT_EQ(AckOf(&c, 5021, kB, 4), AckResult::kUnexpected);
  EXPECT_TRUE(c.Status().excluded.empty());
}

// Exclusion counts missed deadlines in a row: an ack in between starts the count again. With
// exclude_after 2, B misses epochs 1 and 3 (acking 2) and stays waited for; missing 4 too
// excludes it.
TEST(MigrationCoordinator, ExclusionCountsMissedDeadlinesInARowOnly) {
  MigrationCoordinator c(Config());
  auto epoch = [&c](uint64_t t0, bool b_acks) {
    c.Request(t0);
    Drain(&c);
    c.Planned(t0, c.epoch(), true, true, {kA, kB});
    Drain(&c);
    EXPECT_EQ(AckOf(&c, t0 + 1, kA, 2), AckResult::kCounted);
    if (b_acks) {
      EXPECT_EQ(AckOf(&c, t0 + 2, kB, 2), AckResult::kCounted);
      c.RoutingDone(t0 + 3, c.epoch());
    } else {
      c.Tick(t0 + 100);  // B late: aborted; both are told to stay (B may have moved late)
      EXPECT_EQ(c.phase(), MigPhase::kRepath);
      EXPECT_EQ(c.Status().expected, 2u);
    }
    AckOf(&c, t0 + 110, kA, 4);
    AckOf(&c, t0 + 111, kB, 4);
    EXPECT_EQ(c.phase(), MigPhase::kIdle);
    return c.Status().last_outcome;
  };
  EXPECT_EQ(epoch(1000, false), "aborted-timeout");
  EXPECT_EQ(epoch(2000, true), "released");
  EXPECT_EQ(epoch(3000, false), "aborted-timeout");
  EXPECT_TRUE(c.Status().excluded.empty());
  EXPECT_EQ(epoch(4000, false), "aborted-timeout");
  EXPECT_EQ(c.Status().excluded, std::vector<PortGid>{kB});
  // Excluded: the next epoch waits for A alone.
  c.Request(5000);
  Drain(&c);
  c.Planned(5000, c.epoch(), true, true, {kA, kB});
  EXPECT_EQ(c.Status().expected, 1u);
  EXPECT_EQ(AckOf(&c, 5001, kA, 2), AckResult::kCounted);
  EXPECT_EQ(c.phase(), MigPhase::kPush);
}

// Excluded ports come back: with every participant excluded the epoch still sends UnPath (not
// waited for), the ports' acks of it re-admit them, and from the next epoch on they are waited
// for again (no "no subscriber to wait for", no unprotected release).
TEST(MigrationCoordinator, ExcludedPortsComeBackWhenTheyAckAgain) {
  MigrationCoordinator c(Config());  // exclude_after 2
  for (int i = 0; i < 2; ++i) {      // A and B miss two phase-2 deadlines in a row
    const uint64_t t0 = 1000 * (i + 1);
    c.Request(t0);
    Drain(&c);
    c.Planned(t0, c.epoch(), true, true, {kA, kB});
    Drain(&c);
    c.Tick(t0 + 100);
    c.Tick(t0 + 150);
    ASSERT_EQ(c.phase(), MigPhase::kIdle);
    EXPECT_EQ(c.Status().last_outcome, "aborted-timeout");
  }
  ASSERT_EQ(c.Status().excluded, (std::vector<PortGid>{kA, kB}));
  // Everyone excluded: nobody is waited for, but the UnPath goes out so they can ack.
  c.Request(3000);
  Drain(&c);
  c.Planned(3000, c.epoch(), true, true, {kA, kB});
  std::vector<MigAction> a = Drain(&c);
  ASSERT_EQ(Kinds(a), (std::vector<MigAction::Kind>{MigAction::kSendUnpath, MigAction::kRelease}));
  EXPECT_EQ(a[0].epoch, c.epoch());
  EXPECT_EQ(a[0].deadline_ms, 100u);
  EXPECT_EQ(c.Status().expected, 0u);
  // A's phase-2 ack arrives while the tables are pushed: not counted, but A is back.
  EXPECT_EQ(AckOf(&c, 3010, kA, 2), AckResult::kWrongPhase);
  EXPECT_EQ(c.Status().excluded, std::vector<PortGid>{kB});
  c.RoutingDone(3020, c.epoch());
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kSendRepath});
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().last_outcome, "released");
  // B's RePath ack of that epoch arrives after it ended: B is back too. A stranger's ack of the
  // epoch, or B's ack of an earlier epoch, would not have re-admitted anyone.
  EXPECT_EQ(AckOf(&c, 3030, kB, 4), AckResult::kWrongPhase);
  EXPECT_TRUE(c.Status().excluded.empty());
  // The next epoch waits for both again.
  std::vector<std::string> logs;
  c.Request(4000);
  Drain(&c, &logs);
  c.Planned(4000, c.epoch(), true, true, {kA, kB});
  EXPECT_EQ(Kinds(Drain(&c, &logs)), std::vector<MigAction::Kind>{MigAction::kSendUnpath});
  for (const std::string& l : logs) EXPECT_EQ(l.find("no subscriber"), std::string::npos) << l;
  EXPECT_TRUE(c.Holding());
  EXPECT_EQ(c.Status().expected, 2u);
  EXPECT_EQ(AckOf(&c, 4010, kA, 2), AckResult::kCounted);
  EXPECT_TRUE(c.Holding());  // B's ack is waited for
  c.Tick(4100);              // and missing it aborts again
  EXPECT_EQ(c.phase(), MigPhase::kRepath);
  AckOf(&c, 4110, kA, 4);
  c.Tick(4150);
  EXPECT_EQ(c.Status().last_outcome, "aborted-timeout");
  EXPECT_TRUE(c.Status().excluded.empty());  // one miss after coming back: not excluded yet
}

// Only an ack of the current epoch by the excluded port itself re-admits it.
TEST(MigrationCoordinator, StrangersAndOldEpochsDoNotReadmitAnExcludedPort) {
  MigrationCoordinator c(Config());
  for (int i = 0; i < 2; ++i) {
    const uint64_t t0 = 1000 * (i + 1);
    c.Request(t0);
    Drain(&c);
    c.Planned(t0, c.epoch(), true, true, {kA});
    Drain(&c);
    c.Tick(t0 + 100);
    c.Tick(t0 + 150);
  }
  ASSERT_EQ(c.Status().excluded, std::vector<PortGid>{kA});
  c.Request(3000);
  Drain(&c);
  c.Planned(3000, c.epoch(), true, true, {kA});
  Drain(&c);
  EXPECT_EQ(c.Ack(3001, kA, SAR_MIG_ACK, 2, c.epoch() - 1), AckResult::kWrongEpoch);
  EXPECT_EQ(c.Ack(3002, kA, SAR_MIG_UNPATH, 2, c.epoch()), AckResult::kMalformed);
  EXPECT_EQ(c.Ack(3003, kA, SAR_MIG_ACK, 1, c.epoch()), AckResult::kWrongPhase);
  EXPECT_EQ(AckOf(&c, 3004, kStranger, 2), AckResult::kWrongPhase);
  EXPECT_EQ(c.Status().excluded, std::vector<PortGid>{kA});
}

// An ack trap's DataDetails as an agent (or a forger) encodes it.
InboxAck AckData(const PortGid& issuer, uint32_t epoch, uint8_t phase) {
  sar_mig_msg_t m;
  std::memset(&m, 0, sizeof m);
  m.kind = SAR_MIG_ACK;
  m.phase = phase;
  m.epoch = epoch;
  InboxAck a;
  a.issuer = issuer;
  sar_mig_encode(&m, a.data);
  return a;
}

// What the plugin's thread does when woken: every kept ack into the coordinator, then Tick.
void Deliver(MigAckInbox* inbox, MigrationCoordinator* c, uint64_t now) {
  InboxAck batch[16];
  for (size_t n; (n = inbox->Take(batch, 16)) > 0;) {
    for (size_t i = 0; i < n; ++i) {
      sar_mig_msg_t m = {};
      ASSERT_EQ(sar_mig_decode(batch[i].data, &m), 0);
      c->Ack(now, batch[i].issuer, m.kind, m.phase, m.epoch);
    }
  }
  c->CountIgnored(inbox->TakeStrays());
  c->Tick(now);
}

// A node floods forged acks (30,000 within the 100 ms ack deadline, from ports that are not
// subscribers, with the current and forged epochs) between the honest agents' acks. The honest
// acks are neither displaced nor delayed: the epoch is released once every honest subscriber
// acked, and RePath ends it "released".
TEST(MigrationCoordinator, ForgedAckFloodDoesNotDisplaceHonestAcks) {
  MigrationCoordinator c(Config());
  MigAckInbox inbox;
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA, kB, kC});
  Drain(&c);
  inbox.Sync(c);
  std::mt19937 rng(34);
  auto flood = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const PortGid forger{kA.prefix, 0x1000 + rng() % 4096};
      const uint32_t epoch = rng() % 2 ? c.epoch() : static_cast<uint32_t>(rng());
      const InboxAck a = AckData(forger, epoch, rng() % 2 ? 2 : 4);
      EXPECT_FALSE(inbox.Offer(forger, a.data));  // dropped: wakes nobody
    }
  };
  for (uint8_t phase : {2, 4}) {
    const uint64_t t0 = phase == 2 ? 10 : 110;
    flood(5000);
    EXPECT_TRUE(inbox.Offer(kA, AckData(kA, c.epoch(), phase).data));
    flood(10000);
    EXPECT_TRUE(inbox.Offer(kB, AckData(kB, c.epoch(), phase).data));
    EXPECT_TRUE(inbox.Offer(kB, AckData(kB, c.epoch(), phase).data));  // a resend replaces
    flood(10000);
    EXPECT_TRUE(inbox.Offer(kC, AckData(kC, c.epoch(), phase).data));
    flood(5000);
    EXPECT_EQ(inbox.pending(), 3u);  // the flood queued nothing
    Deliver(&inbox, &c, t0 + 50);
    EXPECT_EQ(inbox.pending(), 0u);
    if (phase == 2) {
      EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kRelease});
      EXPECT_EQ(c.phase(), MigPhase::kPush);
      c.RoutingDone(t0 + 60, 1);
      EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kSendRepath});
      inbox.Sync(c);  // the same participants: the slots stay
    }
  }
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().last_outcome, "released");
  EXPECT_EQ(c.Status().acks_ignored, 60000u);
}

// The inbox follows the epochs' participants: a port asked in the last epoch (excluded ones
// too, so they can come back) is kept, a port no longer asked is a stray; acks not yet taken of
// ports that stay survive a Sync.
TEST(MigrationCoordinator, AckInboxFollowsTheParticipants) {
  MigrationCoordinator c(Config());
  MigAckInbox inbox;
  EXPECT_FALSE(inbox.Offer(kA, AckData(kA, 1, 2).data));  // nothing planned yet
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA, kB});
  inbox.Sync(c);
  EXPECT_TRUE(inbox.Offer(kB, AckData(kB, 1, 2).data));
  EXPECT_FALSE(inbox.Offer(kC, AckData(kC, 1, 2).data));
  c.Tick(100);  // A and B late
  c.Tick(150);
  c.Request(200);
  Drain(&c);
  c.Planned(200, 2, true, true, {kB, kC});
  inbox.Sync(c);
  EXPECT_EQ(inbox.pending(), 1u);  // B's ack kept across the Sync
  EXPECT_FALSE(inbox.Offer(kA, AckData(kA, 2, 2).data));
  EXPECT_TRUE(inbox.Offer(kC, AckData(kC, 2, 2).data));
  InboxAck out[4];
  ASSERT_EQ(inbox.Take(out, 4), 2u);
  EXPECT_EQ(out[0].issuer, kB);  // oldest first
  EXPECT_EQ(out[1].issuer, kC);
  EXPECT_EQ(inbox.TakeStrays(), 3u);
  EXPECT_EQ(inbox.TakeStrays(), 0u);
}

TEST(MigrationCoordinator, ForgedReplayedAndStrayAcksChangeNothing) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA});
  Drain(&c);
  EXPECT_EQ(c.Ack(1, kA, SAR_MIG_ACK, 2, 7), AckResult::kWrongEpoch);         // replayed/future
  EXPECT_EQ(c.Ack(1, kA, SAR_MIG_ACK, 4, 1), AckResult::kWrongPhase);         // RePath ack early
  EXPECT_EQ(c.Ack(1, kA, SAR_MIG_UNPATH, 2, 1), AckResult::kMalformed);       // not an ack
  EXPECT_EQ(c.Ack(1, kStranger, SAR_MIG_ACK, 2, 1), AckResult::kUnexpected);  // forged/unknown
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_TRUE(c.Holding());
  EXPECT_EQ(c.Status().acks_ignored, 4u);
  // The real ack releases; after the epoch, a replay of it does nothing.
  EXPECT_EQ(AckOf(&c, 2, kA, 2), AckResult::kCounted);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kRelease});
  c.RoutingDone(3, 1);
  EXPECT_EQ(AckOf(&c, 4, kA, 4), AckResult::kCounted);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  Drain(&c);
  EXPECT_EQ(c.Ack(5, kA, SAR_MIG_ACK, 2, 1), AckResult::kWrongPhase);
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
}

// An ack of an earlier epoch, sent late (a slow agent, a delayed trap), is not an ack of the
// current one: it is neither counted nor able to release the held tables.
TEST(MigrationCoordinator, AckOfAnEarlierEpochIsNotCounted) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA, kB});
  Drain(&c);
  EXPECT_EQ(AckOf(&c, 1, kA, 2), AckResult::kCounted);
  EXPECT_EQ(AckOf(&c, 2, kB, 2), AckResult::kCounted);
  c.RoutingDone(3, 1);
  EXPECT_EQ(AckOf(&c, 4, kA, 4), AckResult::kCounted);
  EXPECT_EQ(AckOf(&c, 5, kB, 4), AckResult::kCounted);
  ASSERT_EQ(c.phase(), MigPhase::kIdle);
  Drain(&c);
  // Epoch 2 waits for A alone; A's and B's phase-2 acks of epoch 1 arrive now.
  c.Request(10);
  Drain(&c);
  c.Planned(10, 2, true, true, {kA});
  Drain(&c);
  ASSERT_EQ(c.epoch(), 2u);
  EXPECT_EQ(c.Ack(11, kA, SAR_MIG_ACK, 2, 1), AckResult::kWrongEpoch);
  EXPECT_EQ(c.Ack(12, kB, SAR_MIG_ACK, 2, 1), AckResult::kWrongEpoch);
  EXPECT_EQ(c.Ack(13, kA, SAR_MIG_ACK, 4, 1), AckResult::kWrongEpoch);
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_TRUE(c.Holding());
  EXPECT_EQ(c.phase(), MigPhase::kDrain);
  EXPECT_EQ(c.Status().acked, 0u);
  EXPECT_EQ(c.Status().acks_ignored, 3u);
  // Epoch 0 (never valid on the wire) does not count either; epoch 2's own ack releases.
  EXPECT_EQ(c.Ack(14, kA, SAR_MIG_ACK, 2, 0), AckResult::kWrongEpoch);
  EXPECT_TRUE(c.Holding());
  EXPECT_EQ(AckOf(&c, 15, kA, 2), AckResult::kCounted);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kRelease});
  // In phase 4 too: epoch 1's RePath ack does not end epoch 2.
  c.RoutingDone(16, 2);
  Drain(&c);
  EXPECT_EQ(c.Ack(17, kA, SAR_MIG_ACK, 4, 1), AckResult::kWrongEpoch);
  EXPECT_EQ(c.phase(), MigPhase::kRepath);
  EXPECT_EQ(AckOf(&c, 18, kA, 4), AckResult::kCounted);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
}

// Phase 4's own checks: a duplicate RePath ack does not stand in for a missing one, and the
// RePath deadline fires exactly at repath_timeout_ms, naming the late port.
TEST(MigrationCoordinator, DuplicateRePathAckDoesNotEndTheEpochTheDeadlineDoes) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA, kB});
  AckOf(&c, 1, kA, 2);
  AckOf(&c, 2, kB, 2);
  c.RoutingDone(10, 1);
  Drain(&c);
  ASSERT_EQ(c.phase(), MigPhase::kRepath);
  EXPECT_EQ(AckOf(&c, 11, kA, 4), AckResult::kCounted);
  EXPECT_EQ(AckOf(&c, 12, kA, 4), AckResult::kDuplicate);
  EXPECT_EQ(c.phase(), MigPhase::kRepath);
  EXPECT_EQ(c.Status().acked, 1u);
  EXPECT_EQ(c.MsToDeadline(12), 48u);
  c.Tick(59);
  EXPECT_EQ(c.phase(), MigPhase::kRepath);
  std::vector<std::string> logs;
  c.Tick(60);
  Drain(&c, &logs);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().last_outcome, "released-late-repath");
  bool named = false;
  for (const std::string& l : logs)
    named |= l.find("late: 0x0000000000000012") != std::string::npos;
  EXPECT_TRUE(named);
  // B's RePath ack after the epoch: ignored.
  EXPECT_EQ(AckOf(&c, 61, kB, 4), AckResult::kWrongPhase);
}

// Second tests of the epoch checks on the caller's answers: a plan of the aborted epoch that
// arrives after the next epoch started planning (a slow planner) is dropped, and so is a
// routing-done for an earlier epoch's tables in phase 3. And phase 4 ignores strangers and
// non-acks like phase 2 does.
TEST(MigrationCoordinator, AnswersForAnEarlierEpochAreIgnored) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA});
  Drain(&c);
  c.Tick(100);  // no ack: aborted, RePath stay
  EXPECT_EQ(AckOf(&c, 101, kA, 4), AckResult::kCounted);
  ASSERT_EQ(c.Status().last_outcome, "aborted-timeout");
  c.Request(200);
  Drain(&c);
  ASSERT_EQ(c.phase(), MigPhase::kPlan);
  c.Planned(201, 1, true, true, {kA, kB});  // epoch 1's plan, late
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_EQ(c.phase(), MigPhase::kPlan);
  c.Planned(202, 2, true, true, {kA});
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kSendUnpath});
  EXPECT_EQ(c.Status().expected, 1u);
  EXPECT_EQ(AckOf(&c, 203, kA, 2), AckResult::kCounted);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kRelease});
  c.RoutingDone(204, 1);  // a pass that installed epoch 1's tables: not ours
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_EQ(c.phase(), MigPhase::kPush);
  c.RoutingDone(205, 2);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kSendRepath});
  EXPECT_EQ(c.Ack(206, kStranger, SAR_MIG_ACK, 4, 2), AckResult::kUnexpected);
  EXPECT_EQ(c.Ack(207, kA, SAR_MIG_REPATH, 4, 2), AckResult::kMalformed);
  EXPECT_EQ(c.phase(), MigPhase::kRepath);
  EXPECT_EQ(AckOf(&c, 208, kA, 4), AckResult::kCounted);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().last_outcome, "released");
  EXPECT_EQ(c.Status().last_timings.push_ms, 2u);
}

TEST(MigrationCoordinator, RequestStormMergesIntoOneNextEpoch) {
  MigrationCoordinator c(Config());
  c.Request(0);
  for (int i = 0; i < 100; ++i) c.Request(1 + i);
  std::vector<std::string> logs;
  EXPECT_EQ(Kinds(Drain(&c, &logs)), std::vector<MigAction::Kind>{MigAction::kPlan});
  EXPECT_TRUE(c.Status().pending);
  c.Planned(200, 1, true, true, {});
  Drain(&c);
  c.RoutingDone(210, 1);
  // Epoch 1 ends and exactly one more starts.
  const std::vector<MigAction> a = Drain(&c);
  ASSERT_EQ(Kinds(a), (std::vector<MigAction::Kind>{MigAction::kSendRepath, MigAction::kPlan}));
  EXPECT_EQ(a[1].epoch, 2u);
  EXPECT_FALSE(c.Status().pending);
  c.Planned(220, 2, true, false, {});
  Drain(&c);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().epochs_started, 2u);
}

TEST(MigrationCoordinator, TopologyChangeInPhasesOneTwoAbortsAndReplans) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.TopologyChanged(5);  // phase 1: the plan is dropped, a new one started
  std::vector<MigAction> a = Drain(&c);
  ASSERT_EQ(Kinds(a), (std::vector<MigAction::Kind>{MigAction::kDiscard, MigAction::kPlan}));
  EXPECT_EQ(a[1].epoch, 2u);
  EXPECT_EQ(c.Status().last_outcome, "aborted-topology");
  c.Planned(6, 1, true, true, {kA});  // the stale plan of epoch 1 is ignored
  EXPECT_TRUE(Drain(&c).empty());
  c.Planned(7, 2, true, true, {kA, kB});
  Drain(&c);
  EXPECT_EQ(AckOf(&c, 8, kA, 2), AckResult::kCounted);
  c.TopologyChanged(9);  // phase 2: RePath stay to both, then a new plan
  a = Drain(&c);
  ASSERT_EQ(Kinds(a), (std::vector<MigAction::Kind>{MigAction::kDiscard, MigAction::kSendRepath}));
  EXPECT_EQ(a[1].flags, SAR_MIG_FLAG_STAY);
  EXPECT_EQ(c.Status().expected, 2u);
  EXPECT_EQ(AckOf(&c, 10, kA, 4), AckResult::kCounted);
  EXPECT_EQ(AckOf(&c, 11, kB, 4), AckResult::kCounted);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kPlan});
  EXPECT_EQ(c.epoch(), 3u);
  // Phases 3-4: the tables are going in anyway; a topology change does not abort.
  c.Planned(12, 3, true, true, {});
  Drain(&c);
  c.TopologyChanged(13);
  EXPECT_TRUE(Drain(&c).empty());
  EXPECT_EQ(c.phase(), MigPhase::kPush);
}

TEST(MigrationCoordinator, MissingRoutingDoneDoesNotWedge) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA});
  Drain(&c);
  AckOf(&c, 1, kA, 2);
  Drain(&c);
  c.Tick(1001);
  EXPECT_EQ(Kinds(Drain(&c)), std::vector<MigAction::Kind>{MigAction::kSendRepath});
  c.Tick(1051);
  EXPECT_EQ(c.phase(), MigPhase::kIdle);
  EXPECT_EQ(c.Status().last_outcome, "released-unconfirmed");
}

TEST(MigrationCoordinator, StatusJson) {
  MigrationCoordinator c(Config());
  c.Request(0);
  Drain(&c);
  c.Planned(0, 1, true, true, {kA, kB});
  AckOf(&c, 1, kA, 2);
  const std::string j = MigrationStatusJson(c.Status(), 42);
  EXPECT_EQ(j,
            "{\"epoch\":1,\"phase\":2,\"phase_name\":\"drain\",\"expected\":2,\"acked\":1,"
            "\"waiting\":[\"0x0000000000000012\"],\"excluded\":[],\"pending\":false,"
            "\"last_epoch\":0,\"last_outcome\":\"\",\"last_ms\":{\"plan\":0,\"drain\":0,"
            "\"push\":0,\"repath\":0,\"total\":0},\"epochs_started\":1,\"acks_ignored\":0,"
            "\"updated_ms\":42}");
}

// One leaf switch sends one destination up another spine: exactly the hosts on that leaf (the
// sources whose path changed) and the destination are the "changed" scope.
TEST(ChangedRouteEndpoints, SourcesAndDestinationOfChangedPaths) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  const LftSet before = testfab::MinHopLfts(f);
  EXPECT_TRUE(ChangedRouteEndpoints(f, before, before).empty());
  const std::vector<PortRef> ends = f.Endpoints();
  const PortRef src = ends[0], dst = ends[5];
  const NodeId leaf = f.peer(src).node;
  ASSERT_NE(leaf, f.peer(dst).node);
  const Lid lid = f.base_lid(dst);
  const int sw = f.switch_index(leaf);
  // The other up-port of the leaf (ports hosts+1..hosts+spines go to spines).
  const uint8_t now = before.port(sw, lid), other = now == 3 ? 4 : 3;
  LftSet after = before;
  after.set_port(sw, lid, other);
  std::vector<PortRef> changed = ChangedRouteEndpoints(f, before, after);
  std::vector<PortRef> want;
  for (const PortRef& e : ends) {
    if (f.peer(e).node == leaf || e == dst) want.push_back(e);
  }
  EXPECT_EQ(changed, want);
  // Another leaf's entry for a host of the middle leaf: its own hosts and that host.
  LftSet other_leaf = before;
  const int dst_leaf = f.switch_index(f.peer(dst).node);
  const Lid mid_lid = f.base_lid(ends[2]);
  other_leaf.set_port(dst_leaf, mid_lid, other_leaf.port(dst_leaf, mid_lid) == 3 ? 4 : 3);
  want.clear();
  for (const PortRef& e : ends) {
    if (f.peer(e).node == f.peer(dst).node || e == ends[2]) want.push_back(e);
  }
  EXPECT_EQ(ChangedRouteEndpoints(f, before, other_leaf), want);
}

// The truth the "changed" scope must equal, walked naively: every endpoint that is the source
// or the destination of a base-LID route (distinct endpoints) whose hops differ between the two
// table sets.
std::vector<PortRef> NaiveChangedEndpoints(const Fabric& f, const LftSet& before,
                                           const LftSet& after) {
  const std::vector<PortRef> ends = f.Endpoints();
  std::vector<PortRef> out;
  for (size_t e = 0; e < ends.size(); ++e) {
    bool hit = false;
    for (size_t o = 0; o < ends.size() && !hit; ++o) {
      if (o == e) continue;
      for (const auto& [s, d] : {std::pair{e, o}, std::pair{o, e}}) {
        const Lid lid = f.base_lid(ends[d]);
        if (lid == 0) continue;
        const testfab::NaiveRoute a = testfab::NaiveWalk(f, before, ends[s], lid);
        const testfab::NaiveRoute b = testfab::NaiveWalk(f, after, ends[s], lid);
        hit = hit || a.channels != b.channels || a.fate != b.fate;
      }
    }
    if (hit) out.push_back(ends[e]);
  }
  return out;
}

// A route whose only changed hop is its last switch (the destination's leaf leaves by another
// port) changed: every source sends through that leaf. The leaf is also the fabric's last switch
// (spines first here), so neither the walk nor the scan over the switches may stop one short.
TEST(ChangedRouteEndpoints, AChangeAtTheRoutesLastSwitchCounts) {
  Fabric f;
  std::vector<NodeId> spine, leaf;
  for (int i = 0; i < 2; ++i)
    spine.push_back(testfab::AddSwitch(&f, 3, testfab::Numbered("spine", i, 2)));
  for (int i = 0; i < 3; ++i)
    leaf.push_back(testfab::AddSwitch(&f, 4, testfab::Numbered("leaf", i, 2)));
  int h = 0;
  for (NodeId l : leaf) {
    for (int k = 0; k < 2; ++k)
      testfab::Cable(&f, testfab::AddHost(&f, 1, testfab::Numbered("h", h++, 4)), l);
    for (NodeId s : spine) testfab::Cable(&f, l, s);
  }
  testfab::AssignTestLids(&f, 0);
  const LftSet before = testfab::MinHopLfts(f);
  const int last = f.num_switches() - 1;
  ASSERT_EQ(f.switches()[last], leaf.back());
  const std::vector<PortRef> ends = f.Endpoints();
  const PortRef dst = ends.back();  // on the last leaf, port 2 (h05)
  ASSERT_EQ(f.peer(dst).node, leaf.back());
  const Lid lid = f.base_lid(dst);
  ASSERT_EQ(before.port(last, lid), f.peer(dst).port);
  LftSet after = before;
  after.set_port(last, lid, 1);  // to the leaf's other host
  // Every source's route to dst ends on that switch: all endpoints are in the scope.
  EXPECT_EQ(ChangedRouteEndpoints(f, before, after), ends);
  EXPECT_EQ(ChangedRouteEndpoints(f, before, after), NaiveChangedEndpoints(f, before, after));
  // The same leaf's entry for a host of another leaf is the first switch of its own hosts'
  // routes there: those two hosts and the destination.
  LftSet up = before;
  const Lid far = f.base_lid(ends[0]);
  up.set_port(last, far, before.port(last, far) == 3 ? 4 : 3);
  EXPECT_EQ(ChangedRouteEndpoints(f, before, up),
            (std::vector<PortRef>{ends[0], ends[4], ends[5]}));
}

// Random fabrics (parallel cables, dual-port HCAs, LMC 0-2) and a few entries moved to another
// cabled port, base LIDs, extra LIDs and switch LIDs alike: the scope equals the naive walk's.
TEST(ChangedRouteEndpoints, EqualsTheNaiveWalkOnRandomChanges) {
  int nonempty = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Fabric f = seed % 4 == 0 ? testfab::FatTree2(3, 2, 2) : testfab::RandomIrregular(seed);
    std::mt19937_64 rng(seed);
    const LftSet before = testfab::MinHopLfts(f, &rng);
    LftSet after = before;
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < changes; ++k) {
      const int sw = static_cast<int>(rng() % f.num_switches());
      const NodeId node = f.switches()[sw];
      const Lid lid = static_cast<Lid>(1 + rng() % f.max_lid());
      std::vector<uint8_t> cabled;
      for (int p = 1; p <= f.num_ports(node); ++p) {
        if (f.peer({node, p}).valid() && p != after.port(sw, lid)) cabled.push_back(p);
      }
      if (!cabled.empty()) after.set_port(sw, lid, cabled[rng() % cabled.size()]);
    }
    const std::vector<PortRef> want = NaiveChangedEndpoints(f, before, after);
    nonempty += !want.empty();
    EXPECT_EQ(ChangedRouteEndpoints(f, before, after), want) << "seed " << seed;
  }
  EXPECT_GE(nonempty, 20);  // not vacuous: many changes hit some route (25 of 60 do)
}

}  // namespace
}  // namespace sar
