// The C API (sar/c.h) against independent truths: tables walked hop by hop, the engine run
// directly on a fabric built in canonical order by this test, the order-independence OpenSM
// needs, and the routing pass's one verdict on invalid tables.
#include "sar/c.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "invalid_tables_test_util.h"
#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/migration/migration_wire.h"
#include "sar/model/fabric.h"
#include "sar/model/fabric_order.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/jobs.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"
#include "test_fabrics.h"

namespace {

using sar::Fabric;
using sar::NodeId;

// The bridge's flat arrays for `f`, listing nodes in `order` (a permutation of node ids).
struct Flat {
  std::vector<sar_node_t> nodes;
  std::vector<sar_port_t> ports;
  std::vector<sar_link_t> links;
  std::vector<std::string> desc;
  std::vector<NodeId> fabric_node;  // flat index -> NodeId of f
  // The C fabric; the caller destroys it.
  sar_fabric_t* Create(std::string* err) const {
    char* e = nullptr;
    sar_fabric_t* f = sar_fabric_create(nodes.data(), static_cast<int>(nodes.size()), ports.data(),
                                        static_cast<int>(ports.size()), links.data(),
                                        static_cast<int>(links.size()), &e);
    if (e != nullptr) *err = e;
    sar_free(e);
    return f;
  }
};

Flat Flatten(const Fabric& f, const std::vector<NodeId>& order) {
  Flat out;
  std::vector<int> index(f.num_nodes());
  out.desc.reserve(order.size());
  for (NodeId n : order) {
    index[n] = static_cast<int>(out.nodes.size());
    out.desc.push_back(f.description(n));
    out.nodes.push_back({f.node_guid(n), f.is_switch(n), f.num_ports(n), nullptr});
    out.fabric_node.push_back(n);
  }
  for (size_t i = 0; i < out.nodes.size(); ++i) out.nodes[i].description = out.desc[i].c_str();
  for (NodeId n : order) {
    for (int p = f.is_switch(n) ? 0 : 1; p <= (f.is_switch(n) ? 0 : f.num_ports(n)); ++p) {
      if (f.base_lid({n, p}) == 0) continue;
      out.ports.push_back({index[n], p, f.port_guid({n, p}), f.base_lid({n, p}), f.lmc({n, p})});
    }
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const sar::PortRef q = f.peer({n, p});
      if (q.valid() && (q.node > n || (q.node == n && q.port > p))) {
        const sar::LinkRate r = f.link_rate(f.port_id(n, p));
        out.links.push_back(
            {index[n], p, index[q.node], q.port, r.width, static_cast<int>(r.speed)});
      }
    }
  }
  return out;
}

Fabric ThreeLevel() {
  sar::PgftSpec spec;
  EXPECT_TRUE(sar::ParsePgftSpec("pgft:3;4,2,2;1,2,2;1,1,1", &spec).ok());
  Fabric f;
  EXPECT_TRUE(sar::GeneratePgft(spec, {}, &f).ok());
  EXPECT_TRUE(sar::AssignLids({}, &f).ok());
  return f;
}

std::string TempFile(const std::string& name, const std::string& text) {
  static const std::string dir = [] {
    std::string t = "/tmp/sar_c_test.XXXXXX";
    EXPECT_NE(::mkdtemp(t.data()), nullptr);
    return t;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Two jobs, each spread over several leaves, from the fabric's own host names.
std::string Mapping(const Fabric& f) {
  std::string text;
  const auto& h = f.hcas();
  for (size_t i = 0; i < h.size(); ++i) {
    if (i % 3 == 2) continue;
    text += std::string(f.hostname(h[i])) + (i % 2 ? " 101\n" : " 202\n");
  }
  return text;
}

// Options as the OpenSM plugin sets them: the mapping file optional.
struct Options {
  sar_options_t* o = sar_options_create();
  Options(const std::string& engine, const std::string& mapping) {
    sar_options_set_engine(o, engine.c_str());
    sar_options_set_mapping_file(o, mapping.c_str(), /*optional=*/1);
    sar_options_set_threads(o, 1);
  }
  Options(const Options&) = delete;
  ~Options() { sar_options_destroy(o); }
};

struct Routed {
  sar_result_t* r = nullptr;
  std::string err;
  ~Routed() { sar_result_destroy(r); }
};

void RouteFlat(const Flat& flat, const Options& c, Routed* out) {
  sar_fabric_t* f = flat.Create(&out->err);
  if (f == nullptr) return;
  char* err = nullptr;
  out->r = sar_route(f, c.o, &err);
  if (err != nullptr) out->err = err;
  sar_free(err);
  sar_fabric_destroy(f);
}

// Tables keyed by switch GUID, as the switches would hold them.
std::map<sar::Guid, std::vector<uint8_t>> TablesByGuid(const Flat& flat, const sar_result_t* r) {
  std::map<sar::Guid, std::vector<uint8_t>> t;
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const uint8_t* row = sar_result_lft_row(r, static_cast<int>(i));
    EXPECT_EQ(row == nullptr, !flat.nodes[i].is_switch);
    if (row) t[flat.nodes[i].guid].assign(row, row + sar_result_max_lid(r) + 1);
  }
  return t;
}

std::vector<NodeId> Identity(const Fabric& f) {
  std::vector<NodeId> order(f.num_nodes());
  for (NodeId n = 0; n < f.num_nodes(); ++n) order[n] = n;
  return order;
}

// Issue 34: a FIFO put at one job's schedule path made publishing stop there, every pass: the
// jobs after it got no schedule and stale schedules stayed. Now that path is an error (named),
// and the rest is still done.
TEST(SarCApi, OneUnwritableSchedulePathDoesNotStopTheOthers) {
  sar::PgftSpec spec;
  ASSERT_TRUE(sar::ParsePgftSpec("pgft:2;4,4;1,4;1,1", &spec).ok());
  Fabric f;
  ASSERT_TRUE(sar::GeneratePgft(spec, {}, &f).ok());
  ASSERT_TRUE(sar::AssignLids({}, &f).ok());
  const auto& h = f.hcas();
  ASSERT_EQ(h.size(), 16u);
  std::string text;
  for (int i : {0, 1, 4, 9, 13}) text += std::string(f.hostname(h[i])) + " 11 alltoall\n";
  for (int i : {2, 6, 10}) text += std::string(f.hostname(h[i])) + " 12 alltoall\n";
  const std::string mapping = TempFile("jobs_fors_fifo", text);
  Routed routed;
  RouteFlat(Flatten(f, Identity(f)), Options("sar", mapping), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;
  ASSERT_EQ(sar_result_num_fors_jobs(routed.r), 2);
  for (const char* job : {"11", "12"}) {  // each job's path a FIFO in turn
    SCOPED_TRACE(job);
    const std::string fifo = mapping + ".fors." + job;
    const std::string other = mapping + ".fors." + (job == std::string("11") ? "12" : "11");
    const std::string stale = mapping + ".fors.999";
    ::unlink(fifo.c_str());
    ::unlink(other.c_str());
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::ofstream(stale) << "# sar-fors-schedule 1\n";
    char* err = nullptr;
    EXPECT_EQ(sar_result_publish_fors_schedules(routed.r, 7, -1, &err), -1);
    ASSERT_NE(err, nullptr);
    EXPECT_NE(std::string(err).find("'" + fifo + "': a FIFO"), std::string::npos) << err;
    sar_free(err);
    EXPECT_EQ(::access(other.c_str(), F_OK), 0) << "the other job got no schedule";
    EXPECT_NE(::access(stale.c_str(), F_OK), 0) << "the stale schedule was not removed";
    EXPECT_EQ(::access(fifo.c_str(), F_OK), 0);  // left as it is
    ::unlink(fifo.c_str());
  }
}

// Issue 35: an alltoall job without FORS (a 3-level fabric) is named with the pass's reason,
// and publishing writes its "none" file.
TEST(SarCApi, AJobWithoutForsIsNamedWithItsReasonAndGetsANoneFile) {
  const Fabric f = ThreeLevel();
  const auto& h = f.hcas();
  std::string text;
  for (size_t i = 0; i < h.size(); i += 2) text += std::string(f.hostname(h[i])) + " 31 alltoall\n";
  const std::string mapping = TempFile("jobs_fors_none", text);
  Routed routed;
  RouteFlat(Flatten(f, Identity(f)), Options("sar", mapping), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;
  EXPECT_EQ(sar_result_num_fors_jobs(routed.r), 0);
  ASSERT_EQ(sar_result_num_fors_none(routed.r), 1);
  EXPECT_STREQ(sar_result_fors_none_job(routed.r, 0), "31");
  const std::string reason = sar_result_fors_none_reason(routed.r, 0);
  EXPECT_NE(reason.find("not a 2-level fat-tree"), std::string::npos) << reason;
  EXPECT_EQ(sar_result_fors_none_job(routed.r, 1), nullptr);
  EXPECT_EQ(sar_result_fors_none_reason(routed.r, -1), nullptr);
  char* err = nullptr;
  EXPECT_EQ(sar_result_publish_fors_schedules(routed.r, 7, -1, &err), 1);
  EXPECT_EQ(err, nullptr);
  sar::ForsScheduleFile file;
  ASSERT_TRUE(sar::ReadForsSchedule(mapping + ".fors.31", &file).ok());
  EXPECT_TRUE(file.none);
  EXPECT_EQ(file.none_reason, reason);
  EXPECT_EQ(file.epoch, 7u);
}

// The refinement's work limit reaches the sar engine through the options the plugin sets: one
// step stops the search at once (the note says so), the default lets it finish on this fabric.
TEST(SarCApi, RefineWorkLimitReachesTheEngine) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  const std::string mapping = TempFile("jobs_work", Mapping(f));
  auto refine_note = [](const sar_result_t* r) {
    for (int i = 0; i < sar_result_num_notes(r); ++i) {
      const std::string note = sar_result_note(r, i);
      if (note.find("refinement: ") != std::string::npos) return note;
    }
    return std::string();
  };
  Options plain("sar", mapping), limited("sar", mapping), reset("sar", mapping);
  sar_options_set_sar_refine_work(limited.o, 1);
  sar_options_set_sar_refine_work(reset.o, 0);  // 0 = the default
  Routed a, b, c;
  RouteFlat(flat, plain, &a);
  RouteFlat(flat, limited, &b);
  RouteFlat(flat, reset, &c);
  ASSERT_NE(a.r, nullptr) << a.err;
  ASSERT_NE(b.r, nullptr) << b.err;
  ASSERT_NE(c.r, nullptr) << c.err;
  ASSERT_NE(refine_note(a.r), "");
  EXPECT_EQ(refine_note(a.r).find("stopped at the work limit"), std::string::npos)
      << refine_note(a.r);
  EXPECT_NE(refine_note(b.r).find("stopped at the work limit"), std::string::npos)
      << refine_note(b.r);
  EXPECT_EQ(refine_note(c.r), refine_note(a.r));
}

TEST(SarCApi, TablesDeliverEveryRouteWalkedHopByHop) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  Routed routed;
  RouteFlat(flat, Options("sar", TempFile("jobs_walk", Mapping(f))), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;
  EXPECT_STREQ(sar_result_engine(routed.r), "sar");
  // Copy the bridge's rows into an LftSet indexed by this fabric's switches and walk them.
  sar::LftSet lfts(f);
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const NodeId n = flat.fabric_node[i];
    if (!f.is_switch(n)) continue;
    const uint8_t* row = sar_result_lft_row(routed.r, static_cast<int>(i));
    ASSERT_NE(row, nullptr);
    for (sar::Lid l = 0; l <= f.max_lid(); ++l) lfts.set_port(f.switch_index(n), l, row[l]);
  }
  for (const sar::PortRef& src : f.Endpoints()) {
    for (const sar::PortRef& dst : f.Endpoints()) {
      if (src == dst) continue;
      const auto route = sar::testfab::NaiveWalk(f, lfts, src, f.base_lid(dst));
      EXPECT_EQ(route.fate, sar::RouteFate::kDelivered)
          << f.name(src.node) << "->" << f.name(dst.node);
    }
  }
}

// LMC 1: OpenSM hands the plugin LID ranges; every LID of every HCA must be routed.
TEST(SarCApi, EveryLidOfAnLmcRangeIsDelivered) {
  const Fabric f = sar::testfab::FatTree2(4, 2, 3, /*lmc=*/1);
  const Flat flat = Flatten(f, Identity(f));
  Routed routed;
  RouteFlat(flat, Options("dfsssp", ""), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;
  sar::LftSet lfts(f);
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const NodeId n = flat.fabric_node[i];
    if (!f.is_switch(n)) continue;
    const uint8_t* row = sar_result_lft_row(routed.r, static_cast<int>(i));
    for (sar::Lid l = 0; l <= f.max_lid(); ++l) lfts.set_port(f.switch_index(n), l, row[l]);
  }
  int routes = 0;
  for (const sar::PortRef& src : f.Endpoints()) {
    for (const sar::PortRef& dst : f.Endpoints()) {
      if (src == dst) continue;
      ASSERT_EQ(f.lmc(dst), 1);
      for (sar::Lid l = f.base_lid(dst); l < f.base_lid(dst) + 2; ++l, ++routes) {
        EXPECT_EQ(sar::testfab::NaiveWalk(f, lfts, src, l).fate, sar::RouteFate::kDelivered);
      }
    }
  }
  EXPECT_EQ(routes, 12 * 11 * 2);
}

// Migration mode through the C API, as the plugin uses it: highLID rows identical for two job
// mappings, sar_result_layer answers the last lane for high -> high and a base layer otherwise.
TEST(SarCApi, MigrationModeHighRowsIgnoreTheJobs) {
  const Fabric f = ThreeLevel();
  Fabric lmc1 = f;
  lmc1.ClearLids();
  sar::testfab::AssignTestLids(&lmc1, 1);
  const Flat flat = Flatten(lmc1, Identity(lmc1));
  Options a("sar", TempFile("mig_a", Mapping(lmc1))), b("sar", TempFile("mig_b", "h0 1\n"));
  std::string other;
  const auto& h = lmc1.hcas();
  for (size_t i = 0; i < h.size(); i += 2) other += std::string(lmc1.hostname(h[i])) + " 7\n";
  Options c("sar", TempFile("mig_c", other));
  for (Options* o : {&a, &b, &c}) {
    sar_options_set_migration(o->o, 1);
    sar_options_set_num_vls(o->o, 4);
  }
  Routed ra, rc;
  RouteFlat(flat, a, &ra);
  RouteFlat(flat, c, &rc);
  ASSERT_NE(ra.r, nullptr) << ra.err;
  ASSERT_NE(rc.r, nullptr) << rc.err;
  const auto ta = TablesByGuid(flat, ra.r), tc = TablesByGuid(flat, rc.r);
  int base_differs = 0;
  for (const auto& [guid, row] : ta) {
    for (const sar::PortRef& e : lmc1.Endpoints()) {
      const sar::Lid b0 = lmc1.base_lid(e);
      EXPECT_EQ(row[b0 + 1], tc.at(guid)[b0 + 1]);
      base_differs += row[b0] != tc.at(guid)[b0];
    }
  }
  EXPECT_GT(base_differs, 0);  // the premise: the jobs did change the base rows
  EXPECT_EQ(sar_result_num_layers(ra.r), 4);
  const sar::Lid s = lmc1.base_lid(lmc1.Endpoints().front());
  const sar::Lid d = lmc1.base_lid(lmc1.Endpoints().back());
  EXPECT_EQ(sar_result_layer(ra.r, s + 1, d + 1), 3);
  EXPECT_LT(sar_result_layer(ra.r, s, d), 3);
}

// The coordinator through the C API, as the plugin drives it: acks as wire bytes, actions popped
// with their C numbering, the status file written atomically.
TEST(SarCApi, MigrationCoordinatorThroughC) {
  char* err = nullptr;
  sar_mig_config_t bad = {100, 100, 100, 0, 0};
  EXPECT_EQ(sar_mig_create(&bad, &err), nullptr);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("exclude_after"), std::string::npos);
  sar_free(err);
  err = nullptr;
  sar_mig_config_t cfg = {100, 100, 1000, 2, 7};
  sar_mig_t* m = sar_mig_create(&cfg, &err);
  ASSERT_NE(m, nullptr);
  auto pop_kinds = [&] {
    std::vector<int> k;
    sar_mig_action_t a;
    while (sar_mig_pop_action(m, &a)) {
      if (a.kind != SAR_MIG_ACT_LOG && a.kind != SAR_MIG_ACT_LOG_ERROR) k.push_back(a.kind);
    }
    return k;
  };
  sar_mig_request(m, 0);
  EXPECT_EQ(pop_kinds(), std::vector<int>{SAR_MIG_ACT_PLAN});
  EXPECT_EQ(sar_mig_epoch(m), 7u);
  const sar_mig_gid_t a{0xfe80000000000000ull, 0x21}, forged{0xfe80000000000000ull, 0x99};
  sar_mig_planned(m, 1, 7, 1, 1, &a, 1, nullptr);
  EXPECT_EQ(pop_kinds(), std::vector<int>{SAR_MIG_ACT_UNPATH});
  EXPECT_TRUE(sar_mig_holding(m));
  uint8_t data[SAR_MIG_DATA_SIZE];
  sar_mig_msg_t msg = {};
  msg.kind = SAR_MIG_ACK;
  msg.phase = 2;
  msg.epoch = 7;
  sar_mig_encode(&msg, data);
  uint8_t garbage[SAR_MIG_DATA_SIZE] = {1, 2, 3};
  EXPECT_NE(sar_mig_ack(m, 2, a, garbage), 0);    // not our protocol
  EXPECT_NE(sar_mig_ack(m, 2, forged, data), 0);  // a port not asked
  EXPECT_TRUE(sar_mig_holding(m));
  EXPECT_EQ(sar_mig_ack(m, 3, a, data), 0);
  EXPECT_STREQ(sar_mig_ack_result_name(sar_mig_ack(m, 3, a, data)), "wrong phase");
  EXPECT_EQ(pop_kinds(), std::vector<int>{SAR_MIG_ACT_RELEASE});
  sar_mig_routing_done(m, 4, 7);
  EXPECT_EQ(pop_kinds(), std::vector<int>{SAR_MIG_ACT_REPATH});
  EXPECT_EQ(sar_mig_phase(m), 4);
  const std::string status = TempFile("mig.json", "");
  ASSERT_EQ(sar_mig_write_status(m, 5, status.c_str(), &err), 0) << err;
  std::ifstream in(status);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find("\"epoch\":7,\"phase\":4,\"phase_name\":\"repath\",\"expected\":1"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("\"acks_ignored\":3"), std::string::npos) << line;
  EXPECT_NE(sar_mig_write_status(m, 5, "/nonexistent-dir/x.json", &err), 0);
  ASSERT_NE(err, nullptr);
  sar_free(err);
  sar_mig_destroy(m);
}

// The ack inbox through the C API, as the plugin uses it: synced after planning, a flood from a
// port not asked queues nothing, the participant's ack is taken and releases.
TEST(SarCApi, MigrationAckInboxThroughC) {
  char* err = nullptr;
  sar_mig_config_t cfg = {100, 100, 1000, 2, 7};
  sar_mig_t* m = sar_mig_create(&cfg, &err);
  ASSERT_NE(m, nullptr);
  sar_mig_inbox_t* inbox = sar_mig_inbox_create();
  ASSERT_NE(inbox, nullptr);
  const sar_mig_gid_t a{0xfe80000000000000ull, 0x21}, forged{0xfe80000000000000ull, 0x99};
  sar_mig_request(m, 0);
  sar_mig_planned(m, 1, 7, 1, 1, &a, 1, nullptr);
  sar_mig_inbox_sync(inbox, m);
  uint8_t data[SAR_MIG_DATA_SIZE];
  sar_mig_msg_t msg = {};
  msg.kind = SAR_MIG_ACK;
  msg.phase = 2;
  msg.epoch = 7;
  sar_mig_encode(&msg, data);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(sar_mig_inbox_offer(inbox, forged, data), 0);
  EXPECT_EQ(sar_mig_inbox_offer(inbox, a, data), 1);
  sar_mig_gid_t issuers[4];
  uint8_t taken[4 * SAR_MIG_DATA_SIZE];
  ASSERT_EQ(sar_mig_inbox_take(inbox, issuers, taken, 4), 1u);
  EXPECT_EQ(issuers[0].guid, a.guid);
  EXPECT_EQ(sar_mig_inbox_take(inbox, issuers, taken, 4), 0u);
  EXPECT_EQ(sar_mig_ack(m, 2, issuers[0], taken), 0);
  EXPECT_FALSE(sar_mig_holding(m));
  sar_mig_count_ignored(m, sar_mig_inbox_take_strays(inbox));
  const std::string status = TempFile("mig_inbox.json", "");
  ASSERT_EQ(sar_mig_write_status(m, 5, status.c_str(), &err), 0) << err;
  std::ifstream in(status);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find("\"acks_ignored\":1000"), std::string::npos) << line;
  sar_mig_inbox_destroy(inbox);
  sar_mig_destroy(m);
}

// More kept acks than one take asks for: the rest wait for the next take, in arrival order.
TEST(SarCApi, MigrationAckInboxTakesInArrivalOrder) {
  char* err = nullptr;
  sar_mig_config_t cfg = {100, 100, 1000, 2, 1};
  sar_mig_t* m = sar_mig_create(&cfg, &err);
  ASSERT_NE(m, nullptr);
  sar_mig_inbox_t* inbox = sar_mig_inbox_create();
  ASSERT_NE(inbox, nullptr);
  std::vector<sar_mig_gid_t> ports;
  for (uint64_t g = 0; g < 200; ++g) ports.push_back({0xfe80000000000000ull, 0x1000 + g});
  sar_mig_request(m, 0);
  sar_mig_planned(m, 1, 1, 1, 1, ports.data(), ports.size(), nullptr);
  sar_mig_inbox_sync(inbox, m);
  uint8_t data[SAR_MIG_DATA_SIZE] = {};
  for (size_t i = ports.size(); i-- > 0;) EXPECT_EQ(sar_mig_inbox_offer(inbox, ports[i], data), 1);
  std::vector<sar_mig_gid_t> issuers(150);
  std::vector<uint8_t> taken(150 * SAR_MIG_DATA_SIZE);
  ASSERT_EQ(sar_mig_inbox_take(inbox, issuers.data(), taken.data(), 150), 150u);
  for (size_t i = 0; i < 150; ++i) EXPECT_EQ(issuers[i].guid, ports[ports.size() - 1 - i].guid);
  ASSERT_EQ(sar_mig_inbox_take(inbox, issuers.data(), taken.data(), 150), 50u);
  EXPECT_EQ(issuers[49].guid, ports[0].guid);
  EXPECT_EQ(sar_mig_inbox_take(inbox, issuers.data(), taken.data(), 150), 0u);
  sar_mig_inbox_destroy(inbox);
  sar_mig_destroy(m);
}

TEST(SarCApi, NodeOrderOfTheInputDoesNotChangeTheTables) {
  const Fabric f = ThreeLevel();
  const std::string jobs = TempFile("jobs_order", Mapping(f));
  std::vector<NodeId> order = Identity(f);
  const Flat a = Flatten(f, order);
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  const Flat b = Flatten(f, order);
  Routed ra, rb;
  RouteFlat(a, Options("sar", jobs), &ra);
  RouteFlat(b, Options("sar", jobs), &rb);
  ASSERT_NE(ra.r, nullptr) << ra.err;
  ASSERT_NE(rb.r, nullptr) << rb.err;
  EXPECT_EQ(TablesByGuid(a, ra.r), TablesByGuid(b, rb.r));
  for (const sar::PortRef& s : f.Endpoints()) {
    for (const sar::PortRef& d : f.Endpoints()) {
      EXPECT_EQ(sar_result_layer(ra.r, f.base_lid(s), f.base_lid(d)),
                sar_result_layer(rb.r, f.base_lid(s), f.base_lid(d)));
    }
  }
}

// What sar-route computes for the same subnet once its topology lists switches, then HCAs, each
// by GUID: built here node by node, independently of the bridge.
TEST(SarCApi, EqualsTheEngineOnTheCanonicallyOrderedFabric) {
  const Fabric f = ThreeLevel();
  const std::string jobs_path = TempFile("jobs_canon", Mapping(f));
  std::vector<NodeId> order = Identity(f);
  std::reverse(order.begin(), order.end());  // not canonical on purpose
  const Flat flat = Flatten(f, order);
  Routed routed;
  RouteFlat(flat, Options("sar", jobs_path), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;

  std::vector<NodeId> canon = Identity(f);
  std::sort(canon.begin(), canon.end(), [&](NodeId x, NodeId y) {
    if (f.is_switch(x) != f.is_switch(y)) return f.is_switch(x);
    return f.node_guid(x) < f.node_guid(y);
  });
  Fabric g;
  std::vector<NodeId> g_of(f.num_nodes());
  for (NodeId n : canon) {
    g_of[n] = g.AddNode(f.kind(n), f.num_ports(n), f.node_guid(n), f.name(n), f.description(n));
  }
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    for (int p = 0; p <= f.num_ports(n); ++p) {
      if (f.base_lid({n, p})) {
        ASSERT_TRUE(g.SetLid({g_of[n], p}, f.base_lid({n, p}), 0).ok());
      }
      const sar::PortRef q = f.peer({n, p});
      if (p > 0 && q.valid() && q.node > n) {
        ASSERT_TRUE(g.Connect({g_of[n], p}, {g_of[q.node], q.port}).ok());
      }
    }
  }
  sar::JobMapping mapping;
  std::string text = Mapping(f);
  for (size_t pos = 0; pos < text.size();) {
    const size_t eol = text.find('\n', pos);
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    const std::string host = line.substr(0, line.find(' ')), id = line.substr(line.find(' ') + 1);
    auto it = std::find_if(mapping.jobs.begin(), mapping.jobs.end(),
                           [&](const sar::Job& j) { return j.id == id; });
    if (it == mapping.jobs.end()) it = mapping.jobs.insert(mapping.jobs.end(), sar::Job{id, {}});
    it->hosts.push_back(host);
  }
  const std::vector<sar::ResolvedJob> jobs = sar::ResolveJobs(g, mapping);
  sar::RoutingInput in;
  in.fabric = &g;
  in.jobs = &jobs;
  in.threads = 1;
  in.sar_no_regret = true;  // the C API's default (RoutingOptions::sar_no_regret)
  sar::RoutingOutput out;
  ASSERT_TRUE(sar::MakeRoutingEngine("sar")->Route(in, &out).ok());
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const NodeId n = g_of[flat.fabric_node[i]];
    if (!g.is_switch(n)) continue;
    const uint8_t* row = sar_result_lft_row(routed.r, static_cast<int>(i));
    for (sar::Lid l = 0; l <= g.max_lid(); ++l) {
      ASSERT_EQ(row[l], out.lfts.port(g.switch_index(n), l)) << g.name(n) << " lid " << l;
    }
  }
  for (const sar::PortRef& s : f.Endpoints()) {
    for (const sar::PortRef& d : f.Endpoints()) {
      EXPECT_EQ(sar_result_layer(routed.r, f.base_lid(s), f.base_lid(d)),
                out.layers.get(f.base_lid(s), f.base_lid(d)));
    }
  }
}

// The live form (the OpenSM plugin's flat arrays) carries link rates: with one cable at 4xDDR
// the tables are those of sar-route on the same fabric with the same rates, and not those of
// the fabric without them.
TEST(SarCApi, LinkRatesReachTheEngines) {
  Fabric f = ThreeLevel();
  sar::PortId slow = sar::kNoPort;
  for (sar::PortId id = 0; id < f.num_port_slots(); ++id) {
    if (f.peer_id(id) == sar::kNoPort) continue;
    f.set_port_rate(f.port_ref(id), {4, sar::LaneSpeed::kEdr});
    if (slow == sar::kNoPort && f.is_inter_switch(id)) slow = id;
  }
  for (sar::PortId end : {slow, f.peer_id(slow)}) {
    f.set_port_rate(f.port_ref(end), {4, sar::LaneSpeed::kDdr});
  }
  const Flat flat = Flatten(f, Identity(f));
  Flat blind = flat;
  for (sar_link_t& l : blind.links) l.width = l.speed = 0;
  const std::string jobs = TempFile("jobs_rates", Mapping(f));
  Routed with, without;
  RouteFlat(flat, Options("dfsssp", jobs), &with);
  RouteFlat(blind, Options("dfsssp", jobs), &without);
  ASSERT_NE(with.r, nullptr) << with.err;
  ASSERT_NE(without.r, nullptr) << without.err;
  EXPECT_NE(TablesByGuid(flat, with.r), TablesByGuid(blind, without.r));

  Fabric canon;
  ASSERT_TRUE(sar::CanonicalNodeOrder(f, &canon).ok());
  sar::RoutingInput in;
  in.fabric = &canon;
  in.threads = 1;
  sar::RoutingOutput out;
  ASSERT_TRUE(sar::MakeRoutingEngine("dfsssp")->Route(in, &out).ok());
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    if (!flat.nodes[i].is_switch) continue;
    const NodeId n = canon.FindByNodeGuid(flat.nodes[i].guid);
    const uint8_t* row = sar_result_lft_row(with.r, static_cast<int>(i));
    for (sar::Lid l = 0; l <= canon.max_lid(); ++l) {
      ASSERT_EQ(row[l], out.lfts.port(canon.switch_index(n), l)) << canon.name(n) << " lid " << l;
    }
  }
  // A rate the C side cannot name is refused, naming the link.
  Flat bad = flat;
  bad.links[0].speed = 42;
  std::string err;
  EXPECT_EQ(bad.Create(&err), nullptr);
  EXPECT_NE(err.find("link entry 0 has width 4, speed 42"), std::string::npos) << err;
}

TEST(SarCApi, MissingOrEmptyMappingFallsBackToDfsssp) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  Routed missing, empty, dfsssp;
  RouteFlat(flat, Options("sar", "/nonexistent/osmsar/jobs"), &missing);
  RouteFlat(flat, Options("sar", TempFile("jobs_empty", "# nothing\n")), &empty);
  RouteFlat(flat, Options("dfsssp", ""), &dfsssp);
  ASSERT_NE(missing.r, nullptr) << missing.err;
  ASSERT_NE(empty.r, nullptr) << empty.err;
  ASSERT_NE(dfsssp.r, nullptr) << dfsssp.err;
  EXPECT_STREQ(sar_result_engine(missing.r), "dfsssp");
  EXPECT_STREQ(sar_result_engine(empty.r), "dfsssp");
  EXPECT_EQ(TablesByGuid(flat, missing.r), TablesByGuid(flat, dfsssp.r));
  ASSERT_GE(sar_result_num_notes(missing.r), 1);
  EXPECT_NE(std::string(sar_result_note(missing.r, 0)).find("does not exist"), std::string::npos);
}

// Issue 37: the plugin routes through the one routing pass. Its notes are the pass's (engine
// notes prefixed with the engine), computed here by RunRoutingPass itself on the canonical
// fabric: an alltoall job gets FORS, an empty mapping gets dfsssp.
TEST(SarCApi, NotesAreTheRoutingPassNotes) {
  sar::PgftSpec spec;
  ASSERT_TRUE(sar::ParsePgftSpec("pgft:2;4,4;1,4;1,1", &spec).ok());
  Fabric f;
  ASSERT_TRUE(sar::GeneratePgft(spec, {}, &f).ok());
  ASSERT_TRUE(sar::AssignLids({}, &f).ok());
  Fabric canon;
  ASSERT_TRUE(sar::CanonicalNodeOrder(f, &canon).ok());
  const auto& h = f.hcas();
  std::string text;
  for (int i : {0, 1, 4, 9, 13}) text += std::string(f.hostname(h[i])) + " 11 alltoall\n";
  const std::string alltoall = TempFile("jobs_pass_notes", text);
  const std::string empty = TempFile("jobs_pass_notes_empty", "# no jobs\n");
  for (const std::string& mapping : {alltoall, empty}) {
    Routed routed;
    RouteFlat(Flatten(f, Identity(f)), Options("sar", mapping), &routed);
    ASSERT_NE(routed.r, nullptr) << routed.err;
    sar::RoutingRequest request;
    request.fabric = &canon;
    request.options.mapping_path = mapping;
    request.options.mapping_optional = true;
    request.options.threads = 1;
    sar::RoutingResult pass;
    ASSERT_TRUE(sar::RunRoutingPass(request, &pass).ok());
    std::vector<std::string> want = pass.inputs.notes;
    for (const std::string& n : pass.output.notes) want.push_back(pass.inputs.engine + ": " + n);
    std::vector<std::string> got;
    for (int i = 0; i < sar_result_num_notes(routed.r); ++i) {
      got.push_back(sar_result_note(routed.r, i));
    }
    EXPECT_EQ(got, want);
    EXPECT_EQ(sar_result_engine(routed.r), pass.inputs.engine);
    EXPECT_EQ(sar_result_num_fors_jobs(routed.r), static_cast<int>(pass.fors.size()));
    const bool fors = mapping == alltoall;
    EXPECT_EQ(pass.inputs.engine, fors ? "sar" : "dfsssp");
    EXPECT_EQ(pass.fors.size(), fors ? 1u : 0u);
    bool noted = false;
    for (const std::string& n : got) {
      noted =
          noted || n.find(fors ? "sar: fors job 11: 5 hosts"
                               : "lists no jobs: routing with plain dfsssp") != std::string::npos;
    }
    EXPECT_TRUE(noted) << mapping;
  }
}

// sar_route_from: the rows of the tables held now are taken by input node (here in reverse
// order), the delta pass keeps part of them, and with delta off it routes as sar_route.
TEST(SarCApi, RouteFromKeepsHeldTables) {
  const Fabric f = ThreeLevel();
  std::vector<NodeId> order = Identity(f);
  std::reverse(order.begin(), order.end());
  const Flat flat = Flatten(f, order);
  const std::string mapping = TempFile("jobs_delta", Mapping(f));
  Routed held, full;
  RouteFlat(flat, Options("dfsssp", ""), &held);
  RouteFlat(flat, Options("sar", mapping), &full);
  ASSERT_NE(held.r, nullptr) << held.err;
  ASSERT_NE(full.r, nullptr) << full.err;
  std::vector<const uint8_t*> rows(flat.nodes.size(), nullptr);
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = sar_result_lft_row(held.r, static_cast<int>(i));
  std::string create_err;
  sar_fabric_t* fab = flat.Create(&create_err);
  ASSERT_NE(fab, nullptr) << create_err;
  for (int delta : {1, 0}) {
    Options o("sar", mapping);
    sar_options_set_delta(o.o, delta);
    char* err = nullptr;
    sar_result_t* r = sar_route_from(fab, o.o, sar_result_max_lid(held.r), rows.data(), &err);
    ASSERT_NE(r, nullptr) << err;
    const auto a = TablesByGuid(flat, held.r), b = TablesByGuid(flat, r),
               c = TablesByGuid(flat, full.r);
    if (!delta) {
      EXPECT_EQ(b, c);
    } else {
      size_t kept = 0, full_changed = 0;
      for (const auto& [guid, row] : b) {
        for (size_t l = 0; l < row.size(); ++l) {
          kept += row[l] == a.at(guid)[l] && row[l] != c.at(guid)[l];
          full_changed += a.at(guid)[l] != c.at(guid)[l];
        }
      }
      EXPECT_GT(kept, 0u);
      EXPECT_LT(kept, full_changed + 1);
      bool noted = false;
      for (int i = 0; i < sar_result_num_notes(r); ++i) {
        noted = noted || std::string(sar_result_note(r, i)).find("sar: delta: kept ") == 0;
      }
      EXPECT_TRUE(noted);
    }
    sar_result_destroy(r);
  }
  sar_fabric_destroy(fab);
}

// sar_route_from_previous: the previous result's job mapping is the previous job set (its jobs
// run on: the stability rule notes them); without a previous result there is no such note.
TEST(SarCApi, RouteFromPreviousPassesTheLastMapping) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  const std::string mapping = TempFile("jobs_stable", Mapping(f));
  Routed held;
  RouteFlat(flat, Options("sar", mapping), &held);
  ASSERT_NE(held.r, nullptr) << held.err;
  std::vector<const uint8_t*> rows(flat.nodes.size(), nullptr);
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = sar_result_lft_row(held.r, static_cast<int>(i));
  std::string create_err;
  sar_fabric_t* fab = flat.Create(&create_err);
  ASSERT_NE(fab, nullptr) << create_err;
  for (const sar_result_t* previous :
       {static_cast<const sar_result_t*>(held.r), static_cast<const sar_result_t*>(nullptr)}) {
    Options o("sar", mapping);
    char* err = nullptr;
    sar_result_t* r =
        sar_route_from_previous(fab, o.o, sar_result_max_lid(held.r), rows.data(), previous, &err);
    ASSERT_NE(r, nullptr) << err;
    bool noted = false;
    for (int i = 0; i < sar_result_num_notes(r); ++i) {
      noted = noted || std::string(sar_result_note(r, i)).find("sar: stability: ") == 0;
    }
    EXPECT_EQ(noted, previous != nullptr);
    sar_result_destroy(r);
  }
  sar_fabric_destroy(fab);
}

TEST(SarCApi, BrokenMappingFailsNamingFileAndLine) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  const std::string path =
      TempFile("jobs_bad", std::string(f.hostname(f.hcas()[0])) + " 1\nh a b c\n");
  Routed routed;
  RouteFlat(flat, Options("sar", path), &routed);
  EXPECT_EQ(routed.r, nullptr);
  EXPECT_NE(routed.err.find(path + ":2"), std::string::npos) << routed.err;
}

TEST(SarCApi, TooFewVirtualLanesFail) {
  // A 6-switch ring needs two layers: its shortest routes close a cycle of dependencies.
  Fabric ring = sar::testfab::Ring(6, 2);
  const Flat flat = Flatten(ring, Identity(ring));
  Options c("dfsssp", "");
  sar_options_set_num_vls(c.o, 1);
  Routed one, two;
  RouteFlat(flat, c, &one);
  EXPECT_EQ(one.r, nullptr);
  EXPECT_FALSE(one.err.empty());
  sar_options_set_num_vls(c.o, 4);
  RouteFlat(flat, c, &two);
  ASSERT_NE(two.r, nullptr) << two.err;
  EXPECT_GE(sar_result_num_layers(two.r), 2);
}

// The routing pass's verdict through the C API: each invalid table set of the shared cases is
// refused with ValidateRouting's own message, the valid one passes.
TEST(SarCApi, CheckTablesRefusesEachInvalidSetWithThePassMessage) {
  const Fabric f = sar::invalidtables::Triangle();
  std::vector<NodeId> order = Identity(f);
  std::reverse(order.begin(), order.end());
  const Flat flat = Flatten(f, order);
  std::string err;
  sar_fabric_t* fabric = flat.Create(&err);
  ASSERT_NE(fabric, nullptr) << err;
  auto check = [&](const sar::invalidtables::Case& c, std::string* msg) {
    std::vector<const uint8_t*> rows(flat.nodes.size(), nullptr);
    for (size_t i = 0; i < flat.nodes.size(); ++i) {
      const NodeId n = flat.fabric_node[i];
      if (f.is_switch(n)) rows[i] = c.lfts.row(f.switch_index(n));
    }
    std::vector<sar_route_layer_t> layers;
    for (const auto& e : c.layers.Entries()) layers.push_back({e.src, e.dst, e.layer});
    Options o("sar", "");
    sar_options_set_num_vls(o.o, c.num_vls);
    char* e = nullptr;
    const int ok = sar_check_tables(fabric, o.o, c.lfts.max_lid(), rows.data(), layers.data(),
                                    layers.size(), &e);
    *msg = e ? e : "";
    sar_free(e);
    return ok;
  };
  std::string msg;
  sar::invalidtables::Case valid{"valid", sar::invalidtables::Valid(f), {}, 1, 8, ""};
  EXPECT_EQ(check(valid, &msg), 1) << msg;
  for (const sar::invalidtables::Case& c : sar::invalidtables::InvalidCases(f)) {
    EXPECT_EQ(check(c, &msg), 0) << c.name;
    EXPECT_EQ(msg, "failed: " + sar::invalidtables::WithGuidNames(f, c.message)) << c.name;
  }
  sar_fabric_destroy(fabric);
}

TEST(SarCApi, BadInputIsAnErrorNeverACrash) {
  char* err = nullptr;
  const sar_node_t bad_node = {0x10, 1, 0, nullptr};  // no ports
  EXPECT_EQ(sar_fabric_create(&bad_node, 1, nullptr, 0, nullptr, 0, &err), nullptr);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("has 0 ports"), std::string::npos) << err;
  // A second failure replaces (and frees) the first message.
  EXPECT_EQ(sar_fabric_create(nullptr, 3, nullptr, 0, nullptr, 0, &err), nullptr);
  EXPECT_NE(std::string(err).find("bad array"), std::string::npos) << err;
  sar_free(err);
  err = nullptr;
  EXPECT_EQ(sar_route(nullptr, nullptr, &err), nullptr);
  EXPECT_NE(err, nullptr);
  sar_free(err);
  // An HCA without a LID.
  const sar_node_t nodes[2] = {{0x1, 1, 4, "sw"}, {0x2, 0, 1, "h0 HCA-1"}};
  const sar_link_t link = {0, 1, 1, 1, 0, 0};
  err = nullptr;
  EXPECT_EQ(sar_fabric_create(nodes, 2, nullptr, 0, &link, 1, &err), nullptr);
  ASSERT_NE(err, nullptr);
  EXPECT_NE(std::string(err).find("has no LID"), std::string::npos) << err;
  sar_free(err);
}

TEST(SarCApi, UnknownEngineAndNotesOutOfRange) {
  const Fabric f = sar::testfab::FatTree2(2, 2, 2);
  const Flat flat = Flatten(f, Identity(f));
  Routed bad, good;
  RouteFlat(flat, Options("ftree", ""), &bad);
  EXPECT_EQ(bad.r, nullptr);
  EXPECT_NE(bad.err.find("unknown engine 'ftree'"), std::string::npos) << bad.err;
  RouteFlat(flat, Options("minhop", ""), &good);
  ASSERT_NE(good.r, nullptr) << good.err;
  EXPECT_EQ(sar_result_note(good.r, -1), nullptr);
  EXPECT_EQ(sar_result_note(good.r, sar_result_num_notes(good.r)), nullptr);
  EXPECT_EQ(sar_result_lft_row(good.r, 1000), nullptr);
}

// The notes of a result that start with `prefix`.
std::vector<std::string> NotesStarting(const sar_result_t* r, const std::string& prefix) {
  std::vector<std::string> out;
  for (int i = 0; i < sar_result_num_notes(r); ++i) {
    const std::string n = sar_result_note(r, i);
    if (n.compare(0, prefix.size(), prefix) == 0) out.push_back(n);
  }
  return out;
}

// Engine dmodc with a memory handle, as the plugin routes: over a sequence of fabrics with
// switch cables failed and restored (the input in reverse node order, the held tables given as
// sar_route_from's), every pass gives the tables of a pass without memory, and its note says
// incremental; a pass that cannot be incremental says why; a cut that strands a leaf fails as
// without memory, and the memory still serves the next pass.
TEST(SarCApi, MemoryReroutesDmodcIncrementallyWithThePlainTables) {
  sar::PgftSpec spec;
  ASSERT_TRUE(sar::ParsePgftSpec("pgft:3;4,4,2;1,4,2;1,1,1", &spec).ok());
  Fabric intact;
  ASSERT_TRUE(sar::GeneratePgft(spec, {}, &intact).ok());
  ASSERT_TRUE(sar::AssignLids({}, &intact).ok());
  // Switch-to-switch cables, by their end with the lower port slot; and one leaf's uplinks.
  std::vector<std::pair<std::string, int>> cables, leaf_up;
  const std::string leaf = intact.name(intact.switches()[0]);
  for (sar::PortId c = 0; c < intact.num_port_slots(); ++c) {
    if (!intact.is_inter_switch(c)) continue;
    const sar::PortRef r = intact.port_ref(c);
    if (intact.name(r.node) == leaf) leaf_up.push_back({leaf, r.port});
    if (intact.peer_id(c) > c) cables.push_back({intact.name(r.node), r.port});
  }
  ASSERT_GT(cables.size(), 20u);
  ASSERT_EQ(leaf_up.size(), 4u) << leaf;
  struct Step {
    std::vector<std::pair<std::string, int>> cut;
    const char* note;  // the note's start, "" = the pass fails
  };
  const std::vector<Step> steps = {
      {{}, "dmodc: full pass (no earlier pass)"},
      {{cables[3]}, "dmodc: incremental reroute: "},
      {{cables[3], cables[17]}, "dmodc: incremental reroute: "},
      {{cables[17], cables[20]}, "dmodc: incremental reroute: "},
      {leaf_up, ""},  // the leaf's hosts cut off: fails with and without memory
      {{cables[17]}, "dmodc: incremental reroute: "},
      {{}, "dmodc: incremental reroute: "},
      {{{std::string(intact.hostname(intact.hcas()[5])), 1}}, "dmodc: full pass (the HCA ports"},
  };
  sar_memory_t* memory = sar_memory_create();
  ASSERT_NE(memory, nullptr);
  Options with("dmodc", ""), plain("dmodc", "");
  sar_options_set_memory(with.o, memory);
  sar_result_t* held = nullptr;  // what the "switches" hold: the last memory result
  int incremental = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    SCOPED_TRACE("step " + std::to_string(k));
    sar::FailureSet fs;
    fs.links = steps[k].cut;
    Fabric f;
    ASSERT_TRUE(sar::ApplyFailures(intact, fs, &f).ok());
    std::vector<NodeId> order = Identity(f);
    std::reverse(order.begin(), order.end());
    const Flat flat = Flatten(f, order);
    Routed want;
    RouteFlat(flat, plain, &want);
    std::string create_err;
    sar_fabric_t* fab = flat.Create(&create_err);
    ASSERT_NE(fab, nullptr) << create_err;
    char* err = nullptr;
    sar_result_t* got;
    if (held == nullptr) {
      got = sar_route(fab, with.o, &err);
    } else {
      std::vector<const uint8_t*> rows(flat.nodes.size(), nullptr);
      for (size_t i = 0; i < rows.size(); ++i) {
        rows[i] = sar_result_lft_row(held, static_cast<int>(i));
      }
      got = sar_route_from(fab, with.o, sar_result_max_lid(held), rows.data(), &err);
    }
    sar_fabric_destroy(fab);
    if (*steps[k].note == '\0') {
      EXPECT_EQ(want.r, nullptr);
      EXPECT_EQ(got, nullptr);
      ASSERT_NE(err, nullptr);
      EXPECT_EQ(want.err, err);
      sar_free(err);
      sar_result_destroy(got);
      continue;
    }
    ASSERT_NE(want.r, nullptr) << want.err;
    ASSERT_NE(got, nullptr) << err;
    EXPECT_EQ(TablesByGuid(flat, got), TablesByGuid(flat, want.r));
    const std::vector<std::string> notes = NotesStarting(got, steps[k].note);
    EXPECT_EQ(notes.size(), 1u) << "no note starting '" << steps[k].note << "'";
    incremental += !NotesStarting(got, "dmodc: incremental reroute: ").empty();
    // The plain pass says nothing of memory.
    EXPECT_TRUE(NotesStarting(want.r, "dmodc: incremental").empty());
    EXPECT_TRUE(NotesStarting(want.r, "dmodc: full pass").empty());
    sar_result_destroy(held);
    held = got;
  }
  EXPECT_EQ(incremental, 5);
  sar_result_destroy(held);
  sar_memory_destroy(memory);
}

// Other engines leave the memory alone; migration mode says it does not use it.
TEST(SarCApi, MemoryIsOnlyForDmodcOutsideMigrationMode) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  sar_memory_t* memory = sar_memory_create();
  ASSERT_NE(memory, nullptr);
  for (const char* engine : {"updn", "dmodk", "sar-dmodc"}) {
    Options with(engine, ""), plain(engine, "");
    sar_options_set_memory(with.o, memory);
    Routed a, b;
    RouteFlat(flat, with, &a);
    RouteFlat(flat, plain, &b);
    ASSERT_NE(a.r, nullptr) << a.err;
    ASSERT_NE(b.r, nullptr) << b.err;
    EXPECT_EQ(TablesByGuid(flat, a.r), TablesByGuid(flat, b.r)) << engine;
    EXPECT_EQ(sar_result_num_notes(a.r), sar_result_num_notes(b.r)) << engine;
  }
  // Migration mode needs LMC 1.
  Fabric g = ThreeLevel();
  g.ClearLids();
  sar::testfab::AssignTestLids(&g, 1);
  const Flat mflat = Flatten(g, Identity(g));
  Options mig("dmodc", "");
  sar_options_set_memory(mig.o, memory);
  sar_options_set_migration(mig.o, 1);
  sar_options_set_num_vls(mig.o, 2);
  Routed m;
  RouteFlat(mflat, mig, &m);
  ASSERT_NE(m.r, nullptr) << m.err;
  EXPECT_EQ(NotesStarting(m.r, "dmodc: full pass (migration mode").size(), 1u);
  EXPECT_TRUE(NotesStarting(m.r, "dmodc: incremental").empty());
  sar_options_set_memory(mig.o, nullptr);
  sar_memory_destroy(memory);
}

}  // namespace
