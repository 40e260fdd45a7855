// The agent's state machine against a fake MAD transport and fake consumers, on a fake clock.
#include "agent.h"

#include <gtest/gtest.h>

#include <vector>

namespace sarmig {
namespace {

struct Sent {
  Mad mad;
  MadAddr to;
};

class FakeTransport : public MadTransport {
 public:
  bool Send(const Mad& mad, const MadAddr& to) override {
    sent.push_back({mad, to});
    return true;
  }
  int Recv(MadPacket*, int) override { return 0; }
  std::vector<Sent> Take() {
    std::vector<Sent> out;
    out.swap(sent);
    return out;
  }
  std::vector<Sent> sent;
};

class FakeConsumers : public ConsumerControl {
 public:
  void StartPhase(const PhaseOrder& o) override { orders.push_back(o); }
  std::vector<PhaseOrder> orders;
};

constexpr uint16_t kSmLid = 1;
constexpr uint16_t kLid = 9;
constexpr uint64_t kSmGuid = 0x0002c90000200001ull;

class AgentTest : public ::testing::Test {
 protected:
  AgentTest() : log_(nullptr), agent_(Config(), &mad_, &consumers_, &log_) {}

  static AgentConfig Config() {
    AgentConfig c;
    c.port_guid = 0x0002c90000200003ull;
    c.resubscribe = Ms(10000);
    c.ack_resend = Ms(200);
    c.max_high = Ms(5000);
    c.epoch_reset_after = Ms(30000);
    return c;
  }

  void Advance(Ms d) {
    now_ += d;
    agent_.Tick(now_);
  }

  // Runs the start-up: PortInfo query and answer, both subscriptions acknowledged.
  void Bringup(uint16_t sm_lid = kSmLid) {
    agent_.Tick(now_);
    auto sent = mad_.Take();
    ASSERT_FALSE(sent.empty());
    Mad q = sent.back().mad;
    ASSERT_EQ(ParseHeader(q).attr_id, kAttrPortInfo);
    AnswerPortInfo(q, sm_lid);
    AnswerSmInfo(sm_lid);
    agent_.Tick(now_);
    sent = mad_.Take();
    int sets = 0;
    for (const Sent& s : sent) {
      MadHeader h = ParseHeader(s.mad);
      if (h.mgmt_class != kClassSa) continue;
      EXPECT_EQ(h.attr_id, kAttrInformInfo);
      EXPECT_EQ(s.to.lid, sm_lid);
      EXPECT_EQ(s.to.qpn, 1u);
      EXPECT_EQ(s.to.qkey, kSaQkey);
      sets++;
      MadPacket resp;
      resp.mad = s.mad;
      resp.mad[3] = kMethodGetResp;
      // The kernel rewrites the TID's high half: the agent must match on the low half.
      resp.mad[8] = 0x7E;
      agent_.OnMad(resp, now_);
    }
    EXPECT_EQ(sets, 2);
    ASSERT_TRUE(agent_.status().subscribed);
  }

  void AnswerPortInfo(const Mad& q, uint16_t sm_lid) {
    MadPacket r;
    r.mad = q;
    r.mad[3] = kMethodGetResp;
    r.mad[4] = 0x80;
    sar_mig_put(r.mad.data() + 64 + 8, 0xfe80000000000000ull, 8);
    sar_mig_put(r.mad.data() + 64 + 16, kLid, 2);
    sar_mig_put(r.mad.data() + 64 + 18, sm_lid, 2);
    r.mad[64 + 32] = 0x04;
    r.from.lid = 0xFFFF;
    agent_.OnMad(r, now_);
  }

  // Answers the SMInfo query the agent sent to the SM (its GUID authenticates notices).
  void AnswerSmInfo(uint16_t sm_lid, uint64_t guid = kSmGuid) {
    auto sent = mad_.Take();
    bool found = false;
    for (const Sent& s : sent) {
      if (ParseHeader(s.mad).attr_id != kAttrSmInfo) {
        mad_.sent.push_back(s);
        continue;
      }
      EXPECT_EQ(s.to.lid, sm_lid);
      EXPECT_EQ(s.to.qpn, 0u);
      MadPacket r;
      r.mad = s.mad;
      r.mad[3] = kMethodGetResp;
      sar_mig_put(r.mad.data() + 64, guid, 8);
      r.from.lid = sm_lid;
      agent_.OnMad(r, now_);
      found = true;
    }
    EXPECT_TRUE(found);
  }

  MadPacket Report(uint16_t trap, uint8_t kind, uint8_t phase, uint32_t epoch, uint64_t tid,
                   uint16_t from = kSmLid, uint8_t flags = 0, uint64_t issuer_guid = kSmGuid) {
    MadPacket p;
    Mad& m = p.mad;
    m[0] = 1;
    m[1] = kClassSa;
    m[2] = 2;
    m[3] = kMethodReport;
    sar_mig_put(m.data() + 8, tid, 8);
    sar_mig_put(m.data() + 16, kAttrNotice, 2);
    uint8_t* n = m.data() + 56;
    n[0] = 0x83;
    sar_mig_put(n + 1, 4, 3);
    sar_mig_put(n + 4, trap, 2);
    sar_mig_msg_t msg{};
    msg.kind = kind;
    msg.phase = phase;
    msg.epoch = epoch;
    msg.flags = flags;
    msg.deadline_ms = 1000;
    sar_mig_encode(&msg, n + 10);
    sar_mig_put(n + 64 + 8, issuer_guid, 8);
    p.from.lid = from;
    p.from.qpn = 1;
    return p;
  }
  MadPacket UnPath(uint32_t e, uint64_t tid) { return Report(68, SAR_MIG_UNPATH, 1, e, tid); }
  MadPacket RePath(uint32_t e, uint64_t tid, uint8_t flags = 0) {
    return Report(69, SAR_MIG_REPATH, 4, e, tid, kSmLid, flags);
  }

  // The acks among the sent MADs (checks they go to the SM on QP0).
  std::vector<sar_mig_msg_t> Acks(const std::vector<Sent>& sent) {
    std::vector<sar_mig_msg_t> acks;
    for (const Sent& s : sent) {
      sar_mig_msg_t m{};
      if (!ParseAckTrap(s.mad, &m)) continue;
      EXPECT_EQ(s.to.lid, kSmLid);
      EXPECT_EQ(s.to.qpn, 0u);
      EXPECT_EQ(sar_mig_get(s.mad.data() + 64 + 6, 2), kLid);
      acks.push_back(m);
    }
    return acks;
  }
  int ReportResps(const std::vector<Sent>& sent, uint64_t tid) {
    int n = 0;
    for (const Sent& s : sent)
      if (s.mad[3] == kMethodReportResp && ParseHeader(s.mad).tid == tid) n++;
    return n;
  }

  Logger log_;
  FakeTransport mad_;
  FakeConsumers consumers_;
  Agent agent_;
  Clock::time_point now_{};
};

TEST_F(AgentTest, FullEpochAcksEachPhaseAndResendsUntilRePath) {
  Bringup();
  agent_.OnMad(UnPath(1, 100), now_);
  auto sent = mad_.Take();
  EXPECT_EQ(ReportResps(sent, 100), 1);
  ASSERT_EQ(consumers_.orders.size(), 1u);
  EXPECT_EQ(consumers_.orders[0].phase, 2);
  EXPECT_EQ(consumers_.orders[0].epoch, 1u);
  EXPECT_LE(consumers_.orders[0].deadline.count(), 750);  // 3/4 of the notice's 1000 ms
  EXPECT_TRUE(Acks(sent).empty());                        // no ack before the consumers answered

  agent_.OnPhaseDone(PhaseResult{1, 2, 3, 3, false}, now_);
  auto acks = Acks(mad_.Take());
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].kind, SAR_MIG_ACK);
  EXPECT_EQ(acks[0].phase, 2);
  EXPECT_EQ(acks[0].epoch, 1u);
  EXPECT_EQ(acks[0].consumers, 3);
  EXPECT_EQ(acks[0].drained, 3);
  EXPECT_EQ(acks[0].flags, 0);

  Advance(Ms(250));
  auto again = Acks(mad_.Take());
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].epoch, 1u);
  EXPECT_NE(again[0].seq, acks[0].seq);  // OpenSM drops identical traps

  agent_.OnMad(RePath(1, 101), now_);
  EXPECT_EQ(ReportResps(mad_.Take(), 101), 1);
  ASSERT_EQ(consumers_.orders.size(), 2u);
  EXPECT_EQ(consumers_.orders[1].phase, 4);
  EXPECT_FALSE(consumers_.orders[1].stay);
  Advance(Ms(1000));  // the phase-2 ack is no longer resent
  EXPECT_TRUE(Acks(mad_.Take()).empty());
  agent_.OnPhaseDone(PhaseResult{1, 4, 3, 3, false}, now_);
  acks = Acks(mad_.Take());
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].phase, 4);
  EXPECT_EQ(agent_.status().state, "back");
  // Phase 4 acks are few: at most repath_ack_sends in all.
  for (int i = 0; i < 20; i++) Advance(Ms(250));
  EXPECT_LE(Acks(mad_.Take()).size(), 2u);
}

TEST_F(AgentTest, DuplicatesAreAnsweredButChangeNothing) {
  Bringup();
  agent_.OnMad(UnPath(3, 200), now_);
  agent_.OnMad(UnPath(3, 200), now_);  // OpenSM's retry: same TID
  auto sent = mad_.Take();
  EXPECT_EQ(ReportResps(sent, 200), 2);
  EXPECT_EQ(consumers_.orders.size(), 1u);
  EXPECT_EQ(agent_.status().duplicate_reports, 1u);
  agent_.OnMad(UnPath(3, 201), now_);  // the coordinator resends the epoch: no new order
  EXPECT_EQ(consumers_.orders.size(), 1u);
  agent_.OnPhaseDone(PhaseResult{3, 2, 0, 0, false}, now_);
  mad_.Take();
  agent_.OnMad(UnPath(3, 202), now_);  // ... after our ack: resend the ack at once
  EXPECT_EQ(Acks(mad_.Take()).size(), 1u);
  EXPECT_EQ(consumers_.orders.size(), 1u);
}

TEST_F(AgentTest, RestartedOpenSmReusingATidIsNotADuplicate) {
  Bringup();
  agent_.OnMad(UnPath(20, 0x10), now_);
  agent_.OnPhaseDone(PhaseResult{20, 2, 0, 0, false}, now_);
  agent_.OnMad(RePath(20, 0x11), now_);
  agent_.OnPhaseDone(PhaseResult{20, 4, 0, 0, false}, now_);
  // A restarted OpenSM counts TIDs from the same start: same TID, new notice.
  agent_.OnMad(UnPath(21, 0x10), now_);
  ASSERT_EQ(consumers_.orders.size(), 3u);
  EXPECT_EQ(consumers_.orders[2].epoch, 21u);
  EXPECT_EQ(agent_.status().duplicate_reports, 0u);
}

TEST_F(AgentTest, HostileNoticesAreIgnored) {
  Bringup();
  agent_.OnMad(UnPath(5, 300), now_);
  agent_.OnPhaseDone(PhaseResult{5, 2, 0, 0, false}, now_);
  agent_.OnMad(RePath(5, 301), now_);
  agent_.OnPhaseDone(PhaseResult{5, 4, 0, 0, false}, now_);
  mad_.Take();
  size_t orders = consumers_.orders.size();

  MadPacket bad_magic = UnPath(6, 302);
  bad_magic.mad[56 + 10] ^= 0xFF;
  MadPacket old_epoch = UnPath(4, 303);  // replay of an older epoch
  MadPacket not_sm = Report(68, SAR_MIG_UNPATH, 1, 6, 304, /*from=*/33);
  MadPacket kind_mismatch = Report(68, SAR_MIG_REPATH, 4, 6, 305);
  MadPacket other_trap = Report(64, SAR_MIG_UNPATH, 1, 6, 306);
  MadPacket reserved = UnPath(6, 307);
  reserved.mad[56 + 10 + 40] = 1;
  // A node's own trap 68, forwarded by OpenSM: from the SM's LID but with the node's GUID.
  MadPacket forged = Report(68, SAR_MIG_UNPATH, 1, 6, 308, kSmLid, 0, 0x0002c900002000ffull);
  for (const MadPacket* p :
       {&bad_magic, &old_epoch, &not_sm, &kind_mismatch, &other_trap, &reserved, &forged}) {
    agent_.OnMad(*p, now_);
  }
  auto sent = mad_.Take();
  for (uint64_t tid = 302; tid <= 308; tid++) EXPECT_EQ(ReportResps(sent, tid), 1) << tid;
  EXPECT_EQ(consumers_.orders.size(), orders);
  EXPECT_EQ(agent_.status().ignored_notices, 7u);
  EXPECT_EQ(agent_.status().epoch, 5u);
  // A storm of garbage changes nothing either.
  for (int i = 0; i < 1000; i++) agent_.OnMad(Report(68, 9, 9, 0, 1000 + i), now_);
  EXPECT_EQ(consumers_.orders.size(), orders);
  // A genuine next epoch still works.
  agent_.OnMad(UnPath(6, 5000), now_);
  EXPECT_EQ(consumers_.orders.size(), orders + 1);
}

TEST_F(AgentTest, LateConsumerIsReportedInTheAck) {
  Bringup();
  agent_.OnMad(UnPath(2, 400), now_);
  mad_.Take();
  agent_.OnPhaseDone(PhaseResult{2, 2, 2, 1, true}, now_);
  auto acks = Acks(mad_.Take());
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].flags & SAR_MIG_FLAG_LATE_CONSUMER, SAR_MIG_FLAG_LATE_CONSUMER);
  EXPECT_EQ(acks[0].drained, 1);
  EXPECT_EQ(acks[0].consumers, 2);
  // A result for another epoch or phase is stale and sends nothing.
  agent_.OnPhaseDone(PhaseResult{1, 2, 2, 2, false}, now_);
  EXPECT_TRUE(Acks(mad_.Take()).empty());
}

TEST_F(AgentTest, NoRePathMovesBackOnItsOwn) {
  Bringup();
  agent_.OnMad(UnPath(8, 500), now_);
  agent_.OnPhaseDone(PhaseResult{8, 2, 1, 1, false}, now_);
  for (int i = 0; i < 30; i++) Advance(Ms(200));  // 6 s > max_high 5 s
  ASSERT_EQ(consumers_.orders.size(), 2u);
  EXPECT_EQ(consumers_.orders[1].phase, 4);
  EXPECT_TRUE(consumers_.orders[1].stay);
  // Phase-2 resends were bounded by the safety net.
  EXPECT_EQ(agent_.status().state, "moving-back");
}

TEST_F(AgentTest, RePathWithoutUnPathAndAbortFlag) {
  Bringup();
  agent_.OnMad(RePath(11, 600, SAR_MIG_FLAG_STAY), now_);  // we missed the UnPath (restart)
  ASSERT_EQ(consumers_.orders.size(), 1u);
  EXPECT_EQ(consumers_.orders[0].phase, 4);
  EXPECT_TRUE(consumers_.orders[0].stay);
  agent_.OnPhaseDone(PhaseResult{11, 4, 0, 0, false}, now_);
  auto acks = Acks(mad_.Take());
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].epoch, 11u);
  EXPECT_EQ(acks[0].phase, 4);
}

TEST_F(AgentTest, RePathWhileConsumersStillMovingHigh) {
  Bringup();
  agent_.OnMad(UnPath(12, 700), now_);
  agent_.OnMad(RePath(12, 701, SAR_MIG_FLAG_STAY), now_);  // aborted before we acked
  ASSERT_EQ(consumers_.orders.size(), 2u);
  EXPECT_EQ(consumers_.orders[1].phase, 4);
  agent_.OnPhaseDone(PhaseResult{12, 2, 1, 1, false}, now_);  // stale phase-2 result
  EXPECT_TRUE(Acks(mad_.Take()).empty());
}

TEST_F(AgentTest, CoordinatorRestartResetsEpochsAfterSilence) {
  Bringup();
  agent_.OnMad(UnPath(40, 800), now_);
  agent_.OnPhaseDone(PhaseResult{40, 2, 0, 0, false}, now_);
  agent_.OnMad(RePath(40, 801), now_);
  agent_.OnPhaseDone(PhaseResult{40, 4, 0, 0, false}, now_);
  agent_.OnMad(UnPath(1, 802), now_);  // soon after: a replay
  EXPECT_EQ(consumers_.orders.size(), 2u);
  for (int i = 0; i < 31; i++) Advance(Ms(1000));
  agent_.OnMad(UnPath(1, 803), now_);  // after 31 s of silence: a restarted coordinator
  EXPECT_EQ(consumers_.orders.size(), 3u);
  EXPECT_EQ(agent_.status().epoch, 1u);
}

TEST_F(AgentTest, ResubscribesPeriodicallyAndOnNewSmLid) {
  Bringup();
  uint64_t subs = agent_.status().subscriptions;
  Advance(Ms(10001));
  int sets = 0;
  for (const Sent& s : mad_.Take())
    if (ParseHeader(s.mad).attr_id == kAttrInformInfo) sets++;
  EXPECT_EQ(sets, 2);
  // The SM moved to LID 4: PortInfo tells, and the agent subscribes there at once.
  Advance(Ms(1000));
  Mad q{};
  for (const Sent& s : mad_.Take())
    if (ParseHeader(s.mad).attr_id == kAttrPortInfo) q = s.mad;
  ASSERT_EQ(ParseHeader(q).attr_id, kAttrPortInfo);
  AnswerPortInfo(q, 4);
  EXPECT_FALSE(agent_.status().subscribed);
  EXPECT_EQ(agent_.status().sm_guid, 0u);  // a new SM: its GUID is asked again
  AnswerSmInfo(4, 0x0002c90000200099ull);
  EXPECT_EQ(agent_.status().sm_guid, 0x0002c90000200099ull);
  agent_.Tick(now_);
  int to_new = 0;
  for (const Sent& s : mad_.Take())
    if (ParseHeader(s.mad).attr_id == kAttrInformInfo && s.to.lid == 4) to_new++;
  EXPECT_EQ(to_new, 2);
  EXPECT_EQ(agent_.status().subscriptions, subs);
}

TEST_F(AgentTest, SmInfoAnsweredOnlyInTestMode) {
  Bringup();
  MadPacket req;
  req.mad[0] = 1;
  req.mad[1] = kClassSmpDr;
  req.mad[2] = 1;
  req.mad[3] = kMethodGet;
  sar_mig_put(req.mad.data() + 16, kAttrSmInfo, 2);
  req.from.lid = 0xFFFF;
  agent_.OnMad(req, now_);
  EXPECT_TRUE(mad_.Take().empty());  // normal mode: the kernel's SMA answers, not us

  AgentConfig c = Config();
  c.test_mode = true;
  Agent test_agent(c, &mad_, &consumers_, &log_);
  test_agent.OnMad(req, now_);
  auto sent = mad_.Take();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].mad[3], kMethodGetResp);
  EXPECT_EQ(sar_mig_get(sent[0].mad.data() + 64, 8), c.port_guid);
  EXPECT_EQ(test_agent.status().sminfo_answers, 1u);
}

}  // namespace
}  // namespace sarmig
