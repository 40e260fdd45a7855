#include "sar/model/fabric_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/io/topology.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

// The same subnet described in another node order: the ibnetdiscover text of `f` with its
// records (blank-line separated blocks) shuffled, parsed back.
Fabric ShuffledDescription(const Fabric& f, uint64_t seed) {
  TopologyWriteOptions wo;
  wo.style = TopologyStyle::kIbnetdiscover;
  const std::string text = FormatTopology(f, wo);
  std::vector<std::string> blocks;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\n\n", start);
    if (end == std::string::npos) end = text.size();
    blocks.push_back(text.substr(start, end - start) + "\n\n");
    start = end + 2;
  }
  std::mt19937_64 rng(seed);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  std::string shuffled;
  for (const std::string& b : blocks) shuffled += b;
  Fabric out;
  const Status s = ParseTopology(shuffled, "shuffled", &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

Fabric DegradedPgft() {
  PgftSpec spec;
  EXPECT_TRUE(ParsePgftSpec("pgft:3;4,4,4;1,4,4;1,1,1", &spec).ok());
  Fabric f;
  EXPECT_TRUE(GeneratePgft(spec, {}, &f).ok());
  EXPECT_TRUE(AssignLids({}, &f).ok());
  // Two failed cables make ties matter: the engines see an asymmetric tree.
  int cut = 0;
  for (NodeId s : f.switches()) {
    for (int p = 1; p <= f.num_ports(s) && cut < 2; ++p) {
      const PortRef q = f.peer({s, p});
      if (q.valid() && f.is_switch(q.node) && (s * 7 + p) % 11 == 0) {
        f.Disconnect({s, p});
        ++cut;
      }
    }
  }
  return f;
}

TEST(FabricOrderTest, SwitchesThenHcasEachByGuid) {
  const Fabric shuffled = ShuffledDescription(DegradedPgft(), 1);
  Fabric canon;
  ASSERT_TRUE(CanonicalNodeOrder(shuffled, &canon).ok());
  ASSERT_EQ(canon.num_nodes(), shuffled.num_nodes());
  for (NodeId n = 1; n < canon.num_nodes(); ++n) {
    const bool before_ok = canon.is_switch(n - 1) && !canon.is_switch(n);
    EXPECT_TRUE(before_ok || (canon.is_switch(n - 1) == canon.is_switch(n) &&
                              canon.node_guid(n - 1) < canon.node_guid(n)))
        << "node " << n;
  }
}

TEST(FabricOrderTest, AnyDescriptionOrderGivesTheSameFabricAndTables) {
  const Fabric original = DegradedPgft();
  Fabric a, b;
  const Fabric shuffled_a = ShuffledDescription(original, 7);
  const Fabric shuffled_b = ShuffledDescription(original, 8);
  // The two descriptions really differ in order, or this test proves nothing.
  bool differ = false;
  for (NodeId n = 0; n < shuffled_a.num_nodes(); ++n) {
    differ |= shuffled_a.node_guid(n) != shuffled_b.node_guid(n);
  }
  ASSERT_TRUE(differ);
  ASSERT_TRUE(CanonicalNodeOrder(shuffled_a, &a).ok());
  ASSERT_TRUE(CanonicalNodeOrder(shuffled_b, &b).ok());

  // Same nodes, ports, LIDs and cables: their ibnetdiscover text is identical.
  TopologyWriteOptions wo;
  wo.style = TopologyStyle::kIbnetdiscover;
  EXPECT_EQ(FormatTopology(a, wo), FormatTopology(b, wo));
  EXPECT_EQ(a.num_links(), original.num_links());
  EXPECT_EQ(a.max_lid(), original.max_lid());

  // And the engines, which break ties by node order, agree entry for entry.
  for (const char* name : {"dfsssp", "sar"}) {
    RoutingInput in_a, in_b;
    in_a.fabric = &a;
    in_b.fabric = &b;
    RoutingOutput out_a, out_b;
    ASSERT_TRUE(MakeRoutingEngine(name)->Route(in_a, &out_a).ok()) << name;
    ASSERT_TRUE(MakeRoutingEngine(name)->Route(in_b, &out_b).ok()) << name;
    for (int si = 0; si < a.num_switches(); ++si) {
      for (Lid lid = 1; lid <= a.max_lid(); ++lid) {
        ASSERT_EQ(out_a.lfts.port(si, lid), out_b.lfts.port(si, lid))
            << name << " switch " << a.name(a.switches()[si]) << " lid " << lid;
      }
    }
  }
}

}  // namespace
}  // namespace sar
