#include "sar/model/generate.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace sar {

namespace {

// Generous caps that keep every count and index inside int32 arithmetic.
constexpr int kMaxHeight = 16;
constexpr int64_t kMaxNodes = int64_t{1} << 22;
constexpr int64_t kMaxCables = int64_t{1} << 25;

// Shape of a PGFT: per level l = 0..h, how many nodes and how the index splits.
//
// A level-l node is labelled (a_{l+1..h}; b_{1..l}). Its index within the level is
// bpart + span[l] * apart, where bpart = b_1 + w_1*(b_2 + w_2*(...)) and
// apart = a_{l+1} + m_{l+1}*(a_{l+2} + ...). Switches of one sub-tree (same a-part) are thus
// adjacent, and a host's index is s = a_1 + m_1*(a_2 + ...), so in FT(2;M0,M1) s = leaf*M0 + i.
struct Shape {
  int h = 0;
  std::vector<int64_t> count;  // nodes at level l
  std::vector<int64_t> span;   // prod_{i<=l} w_i: number of distinct b-parts at level l
  std::vector<int> ports;      // ports a level-l node needs (down + up)
  int64_t cables = 0;
};

Status CheckSpec(const PgftSpec& spec) {
  if (spec.height < 1 || spec.height > kMaxHeight) {
    return Status::InvalidArgument("PGFT height must be 1.." + std::to_string(kMaxHeight) +
                                   ", got " + std::to_string(spec.height));
  }
  const size_t h = static_cast<size_t>(spec.height);
  const std::pair<const char*, const std::vector<int>*> lists[] = {
      {"m", &spec.m}, {"w", &spec.w}, {"p", &spec.p}};
  for (const auto& [name, list] : lists) {
    if (list->size() != h) {
      return Status::InvalidArgument("PGFT of height " + std::to_string(h) + " needs " +
                                     std::to_string(h) + " values of " + name + ", got " +
                                     std::to_string(list->size()));
    }
    for (size_t i = 0; i < h; ++i) {
      if ((*list)[i] < 1 || (*list)[i] > kMaxPorts) {
        return Status::InvalidArgument(std::string("PGFT ") + name + "_" + std::to_string(i + 1) +
                                       " must be 1.." + std::to_string(kMaxPorts) + ", got " +
                                       std::to_string((*list)[i]));
      }
    }
  }
  return Status::OK();
}

Status ComputeShape(const PgftSpec& spec, Shape* shape) {
  SAR_RETURN_IF_ERROR(CheckSpec(spec));
  const int h = spec.height;
  shape->h = h;
  shape->count.assign(h + 1, 0);
  shape->span.assign(h + 1, 1);
  shape->ports.assign(h + 1, 0);
  // apart[l] = prod_{i>l} m_i, computed top-down with a cap so nothing overflows.
  std::vector<int64_t> apart(h + 1, 1);
  for (int l = h - 1; l >= 0; --l) {
    apart[l] = apart[l + 1] * spec.m[l];
    if (apart[l] > kMaxNodes) return Status::InvalidArgument("PGFT has too many nodes");
  }
  int64_t total = 0;
  for (int l = 0; l <= h; ++l) {
    if (l > 0) shape->span[l] = shape->span[l - 1] * spec.w[l - 1];
    if (shape->span[l] > kMaxNodes) return Status::InvalidArgument("PGFT has too many nodes");
    shape->count[l] = apart[l] * shape->span[l];
    total += shape->count[l];
    if (shape->count[l] > kMaxNodes || total > kMaxNodes) {
      return Status::InvalidArgument("PGFT has more than " + std::to_string(kMaxNodes) + " nodes");
    }
    const int64_t down = l == 0 ? 0 : int64_t{spec.m[l - 1]} * spec.p[l - 1];
    const int64_t up = l == h ? 0 : int64_t{spec.w[l]} * spec.p[l];
    if (down + up > kMaxPorts) {
      return Status::InvalidArgument("PGFT level-" + std::to_string(l) + " nodes need " +
                                     std::to_string(down + up) + " ports, more than " +
                                     std::to_string(kMaxPorts));
    }
    shape->ports[l] = static_cast<int>(down + up);
    if (l < h) shape->cables += shape->count[l] * up;
  }
  if (shape->cables > kMaxCables) return Status::InvalidArgument("PGFT has too many cables");
  return Status::OK();
}

std::string SwitchName(int level, int height, int64_t index) {
  char buf[40];
  if (level == 1) {
    std::snprintf(buf, sizeof buf, "leaf%03lld", static_cast<long long>(index));
  } else if (level == height) {
    std::snprintf(buf, sizeof buf, "spine%03lld", static_cast<long long>(index));
  } else {
    std::snprintf(buf, sizeof buf, "l%dsw%03lld", level, static_cast<long long>(index));
  }
  return buf;
}

std::string HostName(int64_t index) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "h%05lld", static_cast<long long>(index));
  return buf;
}

Status ParseIntList(std::string_view text, std::string_view what, std::vector<int>* out) {
  out->clear();
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    int64_t value = 0;
    bool ok = !item.empty() && item.size() <= 9;
    for (char c : item) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      value = value * 10 + (c - '0');
    }
    if (!ok) {
      return Status::InvalidArgument("expected " + std::string(what) +
                                     " as comma-separated positive integers, got '" +
                                     std::string(text) + "'");
    }
    out->push_back(static_cast<int>(value));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return Status::OK();
}

}  // namespace

Status GeneratePgft(const PgftSpec& spec, const GenerateOptions& options, Fabric* out) {
  Shape shape;
  SAR_RETURN_IF_ERROR(ComputeShape(spec, &shape));
  const int h = shape.h;

  int needed_ports = 1;
  for (int l = 1; l <= h; ++l) needed_ports = std::max(needed_ports, shape.ports[l]);
  if (options.aggregation_nodes) ++needed_ports;  // the last port of each switch: its AN
  int switch_ports = needed_ports;
  if (options.switch_ports != 0) {
    if (options.switch_ports < needed_ports || options.switch_ports > kMaxPorts) {
      return Status::InvalidArgument("switch_ports " + std::to_string(options.switch_ports) +
                                     " out of range: this PGFT needs " +
                                     std::to_string(needed_ports) + ".." +
                                     std::to_string(kMaxPorts));
    }
    switch_ports = options.switch_ports;
  }
  const int hca_ports = shape.ports[0];

  const int64_t num_leaves = shape.count[1];
  const int m1 = spec.m[0];
  if (!options.hosts_per_leaf.empty()) {
    if (spec.w[0] != 1) {
      return Status::InvalidArgument(
          "hosts_per_leaf needs single-homed hosts (w_1 = 1), got w_1 = " +
          std::to_string(spec.w[0]));
    }
    if (static_cast<int64_t>(options.hosts_per_leaf.size()) != num_leaves) {
      return Status::InvalidArgument(
          "hosts_per_leaf has " + std::to_string(options.hosts_per_leaf.size()) +
          " entries, the fabric has " + std::to_string(num_leaves) + " leaves");
    }
    for (size_t i = 0; i < options.hosts_per_leaf.size(); ++i) {
      const int n = options.hosts_per_leaf[i];
      if (n < 0 || n > m1) {
        return Status::InvalidArgument("hosts_per_leaf[" + std::to_string(i) + "] = " +
                                       std::to_string(n) + ", must be 0.." + std::to_string(m1));
      }
    }
  }
  // With w_1 = 1 a host s sits on leaf s / m_1 at position s % m_1.
  auto host_present = [&](int64_t s) {
    return options.hosts_per_leaf.empty() || s % m1 < options.hosts_per_leaf[s / m1];
  };

  Fabric fabric;
  std::string err;
  NodeId switch_count = 0;  // switches are nodes 0..switch_count-1
  // First node id of each switch level; hosts map through host_node (absent hosts: kNoNode).
  std::vector<NodeId> level_first(h + 1, 0);
  Guid next_switch_guid = options.switch_guid_base;
  for (int l = 1; l <= h; ++l) {
    level_first[l] = fabric.num_nodes();
    for (int64_t i = 0; i < shape.count[l]; ++i) {
      std::string name = SwitchName(l, h, i);
      std::string description = name;
      if (fabric.AddNode(NodeKind::kSwitch, switch_ports, next_switch_guid++, std::move(name),
                         std::move(description), &err) == kNoNode) {
        return Status::InvalidArgument(err);
      }
      switch_count = fabric.num_nodes();
    }
  }
  std::vector<NodeId> host_node(shape.count[0], kNoNode);
  Guid next_hca_guid = options.hca_guid_base;
  for (int64_t s = 0; s < shape.count[0]; ++s) {
    if (!host_present(s)) continue;
    std::string name = HostName(s);
    std::string description = name + " HCA-1";
    host_node[s] = fabric.AddNode(NodeKind::kHca, hca_ports, next_hca_guid, std::move(name),
                                  std::move(description), &err);
    if (host_node[s] == kNoNode) return Status::InvalidArgument(err);
    // ibsim gives a CA the counter as node GUID and advances it by its port count + 1.
    next_hca_guid += static_cast<Guid>(hca_ports) + 1;
  }

  // Cables between level l and l+1: child (apart, bpart) joins parent
  // (apart / m_{l+1}, bpart + span_l * b) for each b < w_{l+1}, p_{l+1} times.
  for (int l = 0; l < h; ++l) {
    const int m = spec.m[l], w = spec.w[l], p = spec.p[l];
    const int64_t span = shape.span[l], parent_span = shape.span[l + 1];
    const int up_base = l == 0 ? 0 : spec.m[l - 1] * spec.p[l - 1];
    for (int64_t i = 0; i < shape.count[l]; ++i) {
      const NodeId child = l == 0 ? host_node[i] : level_first[l] + static_cast<NodeId>(i);
      if (child == kNoNode) continue;
      const int64_t bpart = i % span, apart = i / span;
      const int a = static_cast<int>(apart % m);
      const int64_t parent_apart = apart / m;
      for (int b = 0; b < w; ++b) {
        const int64_t parent_index = bpart + span * b + parent_span * parent_apart;
        const NodeId parent = level_first[l + 1] + static_cast<NodeId>(parent_index);
        for (int k = 0; k < p; ++k) {
          SAR_RETURN_IF_ERROR(
              fabric.Connect({child, up_base + b * p + k + 1}, {parent, a * p + k + 1}));
        }
      }
    }
  }
  if (options.aggregation_nodes) {
    // After the hosts (their names and GUIDs stay those of the fabric without ANs), in switch
    // order, each on its switch's last port, described as NVIDIA's switches describe theirs.
    for (NodeId sw = 0; sw < switch_count; ++sw) {
      const NodeId an = fabric.AddNode(NodeKind::kHca, 1, next_hca_guid, "an-" + fabric.name(sw),
                                       "Mellanox Technologies Aggregation Node", &err);
      if (an == kNoNode) return Status::InvalidArgument(err);
      next_hca_guid += 2;
      SAR_RETURN_IF_ERROR(fabric.Connect({an, 1}, {sw, switch_ports}));
    }
  }
  *out = std::move(fabric);
  return Status::OK();
}

Status GenerateFatTree2(int m0, int m1, int parallel, const GenerateOptions& options, Fabric* out) {
  PgftSpec spec;
  spec.height = 2;
  spec.m = {m0, m1};
  spec.w = {1, m0};
  spec.p = {1, parallel};
  return GeneratePgft(spec, options, out);
}

Status GenerateKaryNTree(int k, int n, const GenerateOptions& options, Fabric* out) {
  if (n < 1 || n > kMaxHeight) {
    return Status::InvalidArgument("k-ary-n-tree needs n in 1.." + std::to_string(kMaxHeight) +
                                   ", got " + std::to_string(n));
  }
  PgftSpec spec;
  spec.height = n;
  spec.m.assign(n, k);
  spec.w.assign(n, k);
  spec.w[0] = 1;
  spec.p.assign(n, 1);
  return GeneratePgft(spec, options, out);
}

Status ParsePgftSpec(std::string_view text, PgftSpec* out) {
  static constexpr const char* kForms =
      "expected \"ft2:M0,M1\", \"kary:K,N\" or \"pgft:H;m1,..,mh;w1,..,wh;p1,..,ph\"";
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument(std::string(kForms) + ", got '" + std::string(text) + "'");
  }
  const std::string_view kind = text.substr(0, colon);
  const std::string_view rest = text.substr(colon + 1);
  PgftSpec spec;
  std::vector<int> v;
  if (kind == "ft2") {
    SAR_RETURN_IF_ERROR(ParseIntList(rest, "ft2:M0,M1", &v));
    if (v.size() != 2) {
      return Status::InvalidArgument("expected \"ft2:M0,M1\" (two numbers), got '" +
                                     std::string(text) + "'");
    }
    spec.height = 2;
    spec.m = {v[0], v[1]};
    spec.w = {1, v[0]};
    spec.p = {1, 1};
  } else if (kind == "kary") {
    SAR_RETURN_IF_ERROR(ParseIntList(rest, "kary:K,N", &v));
    if (v.size() != 2) {
      return Status::InvalidArgument("expected \"kary:K,N\" (two numbers), got '" +
                                     std::string(text) + "'");
    }
    if (v[1] < 1 || v[1] > kMaxHeight) {
      return Status::InvalidArgument("kary:K,N needs N in 1.." + std::to_string(kMaxHeight) +
                                     ", got " + std::to_string(v[1]));
    }
    spec.height = v[1];
    spec.m.assign(v[1], v[0]);
    spec.w.assign(v[1], v[0]);
    spec.w[0] = 1;
    spec.p.assign(v[1], 1);
  } else if (kind == "pgft") {
    std::vector<std::string_view> parts;
    size_t start = 0;
    while (true) {
      const size_t semi = rest.find(';', start);
      parts.push_back(rest.substr(
          start, semi == std::string_view::npos ? std::string_view::npos : semi - start));
      if (semi == std::string_view::npos) break;
      start = semi + 1;
    }
    if (parts.size() != 4) {
      return Status::InvalidArgument(
          "expected \"pgft:H;m1,..,mh;w1,..,wh;p1,..,ph\" (four ';'-separated fields), got '" +
          std::string(text) + "'");
    }
    SAR_RETURN_IF_ERROR(ParseIntList(parts[0], "pgft height H", &v));
    if (v.size() != 1)
      return Status::InvalidArgument("expected one pgft height H, got '" + std::string(parts[0]) +
                                     "'");
    spec.height = v[0];
    SAR_RETURN_IF_ERROR(ParseIntList(parts[1], "pgft m1,..,mh", &spec.m));
    SAR_RETURN_IF_ERROR(ParseIntList(parts[2], "pgft w1,..,wh", &spec.w));
    SAR_RETURN_IF_ERROR(ParseIntList(parts[3], "pgft p1,..,ph", &spec.p));
  } else {
    return Status::InvalidArgument(std::string(kForms) + ", got '" + std::string(text) + "'");
  }
  SAR_RETURN_IF_ERROR(CheckSpec(spec));
  *out = std::move(spec);
  return Status::OK();
}

}  // namespace sar
