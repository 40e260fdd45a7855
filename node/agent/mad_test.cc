#include "mad.h"

#include <gtest/gtest.h>

namespace sarmig {
namespace {

sar_mig_msg_t UnpathMsg(uint32_t epoch) {
  sar_mig_msg_t m{};
  m.kind = SAR_MIG_UNPATH;
  m.phase = 1;
  m.epoch = epoch;
  m.deadline_ms = 1000;
  return m;
}

TEST(MadTest, InformInfoSetLayout) {
  Mad m = BuildInformInfoSet(0x1234, Subscription{68, true});
  MadHeader h = ParseHeader(m);
  EXPECT_EQ(h.mgmt_class, kClassSa);
  EXPECT_EQ(h.class_version, 2);
  EXPECT_EQ(h.method, kMethodSet);
  EXPECT_EQ(h.attr_id, kAttrInformInfo);
  EXPECT_EQ(h.tid, 0x1234u);
  const uint8_t* ii = m.data() + 56;
  EXPECT_EQ(ii[16], 0xFF);  // LIDRangeBegin 0xFFFF
  EXPECT_EQ(ii[17], 0xFF);
  EXPECT_EQ(ii[22], 1);  // IsGeneric
  EXPECT_EQ(ii[23], 1);  // Subscribe
  EXPECT_EQ(ii[26], 0);
  EXPECT_EQ(ii[27], 68);                                // TrapNumber
  EXPECT_EQ(sar_mig_get(ii + 28, 4), (1u << 8) | 18u);  // QPN 1, RespTimeValue 18
  EXPECT_EQ(sar_mig_get(ii + 33, 3), 0xFFFFFFu);
  Mad un = BuildInformInfoSet(1, Subscription{69, false});
  EXPECT_EQ(un[56 + 23], 0);
  EXPECT_EQ(sar_mig_get(un.data() + 56 + 28, 4), (1u << 8) | 18u);  // same word to unsubscribe
}

Mad MakeReport(uint16_t trap, const sar_mig_msg_t& msg, bool generic = true) {
  Mad m{};
  m[0] = 1;
  m[1] = kClassSa;
  m[2] = 2;
  m[3] = kMethodReport;
  sar_mig_put(m.data() + 8, 0xABCDEF01, 8);
  sar_mig_put(m.data() + 16, kAttrNotice, 2);
  uint8_t* n = m.data() + 56;
  n[0] = generic ? 0x83 : 0x04;
  sar_mig_put(n + 1, 4, 3);
  sar_mig_put(n + 4, trap, 2);
  sar_mig_put(n + 6, 1, 2);
  sar_mig_encode(&msg, n + 10);
  return m;
}

TEST(MadTest, ReportRoundTripAndResponse) {
  Mad r = MakeReport(68, UnpathMsg(7));
  Notice n;
  std::string why;
  ASSERT_TRUE(ParseReport(r, &n, &why)) << why;
  EXPECT_TRUE(n.is_generic);
  EXPECT_EQ(n.type, 3);
  EXPECT_EQ(n.trap_or_device, 68);
  sar_mig_msg_t m{};
  ASSERT_EQ(sar_mig_decode(n.details.data(), &m), 0);
  EXPECT_EQ(m.epoch, 7u);
  Mad resp = BuildReportResp(r);
  EXPECT_EQ(resp[3], kMethodReportResp);
  EXPECT_EQ(ParseHeader(resp).tid, ParseHeader(r).tid);
  // Not a Report: refused with a reason.
  Mad get = r;
  get[3] = kMethodGet;
  EXPECT_FALSE(ParseReport(get, &n, &why));
  EXPECT_EQ(why, "not a Report");
}

TEST(MadTest, AckTrapRoundTrip) {
  sar_mig_msg_t a{};
  a.kind = SAR_MIG_ACK;
  a.phase = 2;
  a.flags = SAR_MIG_FLAG_LATE_CONSUMER;
  a.epoch = 42;
  a.consumers = 3;
  a.drained = 2;
  a.seq = 9;
  std::array<uint8_t, 16> gid{};
  gid[15] = 0x11;
  Mad t = BuildAckTrap(5, 17, gid, a);
  MadHeader h = ParseHeader(t);
  EXPECT_EQ(h.mgmt_class, kClassSmpLid);
  EXPECT_EQ(h.method, kMethodTrap);
  EXPECT_EQ(h.attr_id, kAttrNotice);
  EXPECT_EQ(t[64], 0x04);  // vendor, informational
  EXPECT_EQ(sar_mig_get(t.data() + 65, 3), SAR_MIG_VENDOR_ID);
  EXPECT_EQ(sar_mig_get(t.data() + 68, 2), SAR_MIG_DEVICE_ID);
  EXPECT_EQ(sar_mig_get(t.data() + 70, 2), 17u);  // IssuerLID
  EXPECT_EQ(t[64 + 64 + 15], 0x11);               // IssuerGID
  sar_mig_msg_t back{};
  ASSERT_TRUE(ParseAckTrap(t, &back));
  EXPECT_EQ(back.epoch, 42u);
  EXPECT_EQ(back.phase, 2);
  EXPECT_EQ(back.flags, SAR_MIG_FLAG_LATE_CONSUMER);
  EXPECT_EQ(back.drained, 2);
  EXPECT_EQ(back.seq, 9u);
}

TEST(MadTest, SmInfoResponseDirectedRoute) {
  Mad req{};
  req[0] = 1;
  req[1] = kClassSmpDr;
  req[2] = 1;
  req[3] = kMethodGet;
  req[7] = 2;  // hop count
  sar_mig_put(req.data() + 8, 0x77, 8);
  sar_mig_put(req.data() + 16, kAttrSmInfo, 2);
  req[192 + 1] = 5;  // return path byte
  Mad resp = BuildSmInfoResp(req, 0x0002c90000200001ull);
  EXPECT_EQ(resp[3], kMethodGetResp);
  EXPECT_EQ(resp[4] & 0x80, 0x80);  // direction bit
  EXPECT_EQ(resp[7], 2);
  EXPECT_EQ(resp[193], 5);
  EXPECT_EQ(sar_mig_get(resp.data() + 64, 8), 0x0002c90000200001ull);
  EXPECT_EQ(resp[64 + 20], 0);  // priority 0, NOT-ACTIVE
  Mad lid_req = req;
  lid_req[1] = kClassSmpLid;
  Mad un = BuildSmpUnsupportedResp(lid_req);
  EXPECT_EQ(sar_mig_get(un.data() + 4, 2), 0x000Cu);
}

TEST(MadTest, PortInfoQueryAndResponse) {
  Mad q = BuildLocalPortInfoGet(3, 1);
  EXPECT_EQ(q[1], kClassSmpDr);
  EXPECT_EQ(q[7], 0);
  EXPECT_EQ(ParseHeader(q).attr_mod, 1u);
  Mad r = q;
  r[3] = kMethodGetResp;
  r[4] = 0x80;
  sar_mig_put(r.data() + 64 + 8, 0xfe80000000000000ull, 8);
  sar_mig_put(r.data() + 64 + 16, 12, 2);
  sar_mig_put(r.data() + 64 + 18, 1, 2);
  r[64 + 32] = 0x44;  // speed | state Active
  r[64 + 34] = 0x01;  // LMC 1
  PortInfo pi;
  ASSERT_TRUE(ParsePortInfoResp(r, &pi));
  EXPECT_EQ(pi.lid, 12);
  EXPECT_EQ(pi.sm_lid, 1);
  EXPECT_EQ(pi.port_state, 4);
  EXPECT_EQ(pi.lmc, 1);
  EXPECT_EQ(pi.gid_prefix, 0xfe80000000000000ull);
  r[5] = 0x04;  // error status
  EXPECT_FALSE(ParsePortInfoResp(r, &pi));
}

}  // namespace
}  // namespace sarmig
