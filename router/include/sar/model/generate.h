// Fat-tree generators.
//
// PGFT(h; m_1..m_h; w_1..w_h; p_1..p_h) as in the Dmodc paper (Zahavi's parallel generalised
// fat-tree): level 0 are the hosts, level h the top switches; every level-l switch has m_l
// children, every level-(l-1) node has w_l parents, joined by p_l parallel cables each.
// FT(2;M0,M1) of the FORS paper is PGFT(2; M0,M1; 1,M0; 1,1): M1 leaves, M0 spines, M0 hosts per
// leaf, host s = leaf*M0 + index. A k-ary-n-tree is PGFT(n; k..k; 1,k..k; 1..1).
//
// Naming (stable, documented in docs/formats.md): hosts "h<NNNNN>" by global index with node
// description "h<NNNNN> HCA-1"; level-1 switches "leaf<NNN>", level-h switches "spine<NNN>",
// levels in between "l<level>sw<NNN>" (h = 1: "leaf"). Indices count from 0. A level-l node
// (a_{l+1..h}; b_1..l) has index b + (prod_{i<=l} w_i) * a with b = b_1 + w_1*(b_2 + ...) and
// a = a_{l+1} + m_{l+1}*(a_{l+2} + ...): a host's index is s = a_1 + m_1*(a_2 + ...), and the
// switches of one sub-tree are adjacent. With hosts_per_leaf, host s keeps its slot index
// (leaf s / m_1, position s % m_1), so names skip the empty slots. Ports: a switch's down ports
// come first (children in order, parallel cables adjacent), then its up ports. GUIDs count up from
// the two bases in the order nodes are created (switches level 1..h, then hosts), the way ibsim
// would number a file written in that order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

struct PgftSpec {
  int height = 2;
  std::vector<int> m;  // children per switch, level 1..h
  std::vector<int> w;  // parents per node, level 1..h (w_1 = 1 for single-homed hosts)
  std::vector<int> p;  // parallel cables, level 1..h
};

struct GenerateOptions {
  /// Hosts on each leaf (size = number of leaves); empty = m_1 on every leaf. A leaf with fewer
  /// hosts leaves its remaining down ports empty.
  std::vector<int> hosts_per_leaf;
  /// Ports per switch; 0 = just enough for the largest switch.
  int switch_ports = 0;
  /// A SHARP Aggregation Node on every switch, as NVIDIA's switches carry one: an HCA named
  /// "an-<switch name>", described "Mellanox Technologies Aggregation Node", on the switch's last
  /// port (one port more than the tree needs), added after the hosts with the next HCA GUIDs.
  bool aggregation_nodes = false;
  Guid switch_guid_base = 0x0002c90000100000ULL;
  Guid hca_guid_base = 0x0002c90000200000ULL;
};

Status GeneratePgft(const PgftSpec& spec, const GenerateOptions& options, Fabric* out);
/// FT(2;M0,M1); `parallel` cables between every leaf and spine.
Status GenerateFatTree2(int m0, int m1, int parallel, const GenerateOptions& options, Fabric* out);
Status GenerateKaryNTree(int k, int n, const GenerateOptions& options, Fabric* out);

/// Parses a generator spec as the CLI takes it:
///   "ft2:M0,M1"  "kary:K,N"  "pgft:H;m1,..,mh;w1,..,wh;p1,..,ph"
Status ParsePgftSpec(std::string_view text, PgftSpec* out);

}  // namespace sar
