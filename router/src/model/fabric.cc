#include "sar/model/fabric.h"

#include <algorithm>
#include <cstdio>

namespace sar {

std::string GuidString(Guid guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

std::string_view FirstWord(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  text.remove_prefix(start);
  return text.substr(0, text.find_first_of(" \t"));
}

bool IsAggregationNodeDescription(std::string_view description) {
  return description.find("Aggregation Node") != std::string_view::npos;
}

bool IsNamelessDescription(std::string_view description) {
  const std::string_view word = FirstWord(description);
  if (word.empty()) return true;
  if (word.size() < 3 || word[0] != 'M' || word[1] != 'T') return false;
  for (char c : word.substr(2)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string NamelessHostName(Guid node_guid) {
  return "H-" + GuidString(node_guid).substr(2);  // GuidString: "0x" + 16 hex digits
}

namespace {

struct SpeedName {
  LaneSpeed speed;
  std::string_view name;
  uint32_t lane_mbps;  // data rate per lane after line coding (8b/10b up to QDR, 64b/66b after)
};
// FDR10 before FDR: names are matched whole, but keep the longer name first anyway.
constexpr SpeedName kSpeeds[] = {
    {LaneSpeed::kSdr, "SDR", 2000},   {LaneSpeed::kDdr, "DDR", 4000},
    {LaneSpeed::kQdr, "QDR", 8000},   {LaneSpeed::kFdr10, "FDR10", 10000},
    {LaneSpeed::kFdr, "FDR", 13636},  {LaneSpeed::kEdr, "EDR", 25000},
    {LaneSpeed::kHdr, "HDR", 50000},  {LaneSpeed::kNdr, "NDR", 100000},
    {LaneSpeed::kXdr, "XDR", 200000},
};

const SpeedName* FindSpeed(LaneSpeed s) {
  for (const SpeedName& n : kSpeeds) {
    if (n.speed == s) return &n;
  }
  return nullptr;
}

bool ValidWidth(int w) { return w == 1 || w == 2 || w == 4 || w == 8 || w == 12; }

}  // namespace

uint32_t LinkRate::mbps() const {
  const SpeedName* s = FindSpeed(speed);
  return s && ValidWidth(width) ? s->lane_mbps * width : 0;
}

std::string LinkRateString(LinkRate rate) {
  const SpeedName* s = FindSpeed(rate.speed);
  if (!s || !ValidWidth(rate.width)) return "";
  return std::to_string(rate.width) + "x" + std::string(s->name);
}

bool ParseLinkRate(std::string_view text, LinkRate* out) {
  const size_t x = text.find('x');
  if (x == 0 || x == std::string_view::npos || x > 2) return false;
  int width = 0;
  for (size_t i = 0; i < x; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    width = width * 10 + (text[i] - '0');
  }
  if (!ValidWidth(width)) return false;
  const std::string_view name = text.substr(x + 1);
  for (const SpeedName& s : kSpeeds) {
    if (s.name == name) {
      *out = LinkRate{static_cast<uint8_t>(width), s.speed};
      return true;
    }
  }
  return false;
}

LinkRate Fabric::link_rate(PortId id) const {
  LinkRate r = rate_[id];
  const PortId other = peer_[id];
  if (other == kNoPort || !rate_[other].declared()) return r;
  if (!r.declared()) return rate_[other];
  // Width and speed are negotiated separately: each is the highest both ends support.
  r.width = std::min(r.width, rate_[other].width);
  r.speed = std::min(r.speed, rate_[other].speed);
  return r;
}

LinkRate Fabric::nominal_rate() const {
  LinkRate best;
  for (PortId id = 0; id < num_port_slots(); ++id) {
    if (peer_[id] == kNoPort) continue;
    const LinkRate r = link_rate(id);
    if (r.mbps() > best.mbps()) best = r;
  }
  return best;
}

std::vector<uint32_t> Fabric::ChannelCapacities() const {
  const uint32_t nominal = nominal_rate().mbps();
  std::vector<uint32_t> cap(num_port_slots(), nominal == 0 ? 1 : nominal);
  if (nominal == 0) return cap;
  for (PortId id = 0; id < num_port_slots(); ++id) {
    if (peer_[id] == kNoPort) continue;
    const uint32_t c = link_rate(id).mbps();
    if (c != 0) cap[id] = c;
  }
  return cap;
}

NodeId Fabric::AddNode(NodeKind kind, int num_ports, Guid node_guid, std::string name,
                       std::string description, std::string* err) {
  if (num_ports < 1 || num_ports > kMaxPorts) {
    if (err)
      *err = "node '" + name + "' has " + std::to_string(num_ports) + " ports (1.." +
             std::to_string(kMaxPorts) + " allowed)";
    return kNoNode;
  }
  if (by_name_.count(name)) {
    if (err) *err = "duplicate node name '" + name + "'";
    return kNoNode;
  }
  if (by_node_guid_.count(node_guid)) {
    if (err) *err = "duplicate node GUID " + GuidString(node_guid) + " ('" + name + "')";
    return kNoNode;
  }
  const NodeId id = num_nodes();
  kind_.push_back(kind);
  num_ports_.push_back(num_ports);
  node_guid_.push_back(node_guid);
  by_name_.emplace(name, id);
  name_.push_back(std::move(name));
  // The host name rule (node_classes.h, docs/formats.md): switches and named HCAs keep the
  // description's first word; an Aggregation Node is no host; a nameless HCA is named by its GUID.
  const bool aggregation = kind == NodeKind::kHca && IsAggregationNodeDescription(description);
  aggregation_node_.push_back(aggregation);
  if (aggregation) {
    hostname_.emplace_back();
  } else if (kind == NodeKind::kHca && IsNamelessDescription(description)) {
    hostname_.push_back(NamelessHostName(node_guid));
  } else {
    hostname_.emplace_back(FirstWord(description));
  }
  description_.push_back(std::move(description));
  by_node_guid_.emplace(node_guid, id);
  port_offset_.push_back(num_port_slots());
  if (kind == NodeKind::kSwitch) {
    switch_index_.push_back(static_cast<int>(switches_.size()));
    switches_.push_back(id);
  } else {
    switch_index_.push_back(-1);
    hcas_.push_back(id);
  }
  for (int p = 0; p <= num_ports; ++p) {
    const PortId slot = num_port_slots();
    port_node_.push_back(id);
    const Guid pg = kind == NodeKind::kSwitch ? node_guid : node_guid + p;
    port_guid_.push_back(pg);
    if (carries_guid(kind, p)) by_port_guid_.emplace(pg, slot);
    peer_.push_back(kNoPort);
    rate_.push_back({});
    base_lid_.push_back(0);
    lmc_.push_back(0);
  }
  return id;
}

void Fabric::set_port_guid(PortRef p, Guid guid) {
  const PortId id = port_id(p);
  if (carries_guid(kind_[p.node], p.port)) {
    auto [first, last] = by_port_guid_.equal_range(port_guid_[id]);
    for (auto it = first; it != last; ++it) {
      if (it->second == id) {
        by_port_guid_.erase(it);
        break;
      }
    }
    by_port_guid_.emplace(guid, id);
  }
  port_guid_[id] = guid;
}

bool Fabric::port_in_use(PortId id) const {
  const PortRef p = port_ref(id);
  return is_switch(p.node) ? p.port == 0 : peer_[id] != kNoPort;
}

Status Fabric::CheckPortGuids(PortRef* clash) const {
  std::unordered_map<Guid, PortId> seen;
  for (PortId id = 0; id < num_port_slots(); ++id) {
    const PortRef p = port_ref(id);
    if (!carries_guid(kind_[p.node], p.port) || !port_in_use(id)) continue;
    const auto [it, inserted] = seen.emplace(port_guid_[id], id);
    if (inserted) continue;
    const PortRef o = port_ref(it->second);
    if (clash) *clash = p;
    return Status::InvalidArgument("port GUID " + GuidString(port_guid_[id]) + " of '" +
                                   name_[p.node] + "' port " + std::to_string(p.port) +
                                   " is also that of '" + name_[o.node] + "' port " +
                                   std::to_string(o.port));
  }
  return Status::OK();
}

Status Fabric::Connect(PortRef a, PortRef b) {
  for (const PortRef& p : {a, b}) {
    if (p.node < 0 || p.node >= num_nodes()) {
      return Status::InvalidArgument("no node with id " + std::to_string(p.node));
    }
    if (p.port < 1 || p.port > num_ports_[p.node]) {
      return Status::InvalidArgument("node '" + name_[p.node] + "' has no port " +
                                     std::to_string(p.port) + " (ports 1.." +
                                     std::to_string(num_ports_[p.node]) + ")");
    }
  }
  const PortId ia = port_id(a), ib = port_id(b);
  if (ia == ib) return Status::InvalidArgument("port cabled to itself on '" + name_[a.node] + "'");
  for (PortId i : {ia, ib}) {
    if (peer_[i] != kNoPort) {
      const PortRef p = port_ref(i);
      const PortRef q = port_ref(peer_[i]);
      return Status::InvalidArgument("port " + std::to_string(p.port) + " of '" + name_[p.node] +
                                     "' is already cabled to port " + std::to_string(q.port) +
                                     " of '" + name_[q.node] + "'");
    }
  }
  if (kind_[a.node] == NodeKind::kHca && kind_[b.node] == NodeKind::kHca) {
    // Back-to-back HCAs are legal InfiniBand but no fabric we route; reject loudly.
    return Status::InvalidArgument("HCA '" + name_[a.node] + "' cabled directly to HCA '" +
                                   name_[b.node] + "'");
  }
  peer_[ia] = ib;
  peer_[ib] = ia;
  ++num_links_;
  return Status::OK();
}

void Fabric::Disconnect(PortRef p) {
  const PortId id = port_id(p);
  const PortId other = peer_[id];
  if (other == kNoPort) return;
  peer_[id] = kNoPort;
  peer_[other] = kNoPort;
  --num_links_;
}

Status Fabric::SetLid(PortRef p, Lid base, int lmc) {
  if (lmc < 0 || lmc > 7) return Status::InvalidArgument("LMC must be 0..7");
  const Lid count = Lid{1} << lmc;
  if (base == 0 || base + count - 1 > kMaxUnicastLid) {
    return Status::InvalidArgument("LID " + std::to_string(base) + " out of unicast range");
  }
  if (base % count != 0) {
    return Status::InvalidArgument("base LID " + std::to_string(base) + " not aligned to LMC " +
                                   std::to_string(lmc));
  }
  const PortId id = port_id(p);
  for (Lid l = base; l < base + count; ++l) {
    if (l < lid_owner_.size() && lid_owner_[l] != kNoPort && lid_owner_[l] != id) {
      const PortRef o = port_ref(lid_owner_[l]);
      return Status::InvalidArgument("LID " + std::to_string(l) + " of '" + name_[p.node] +
                                     "' already belongs to '" + name_[o.node] + "' port " +
                                     std::to_string(o.port));
    }
  }
  // Release the old range, then claim the new one.
  if (base_lid_[id] != 0) {
    const Lid old_count = Lid{1} << lmc_[id];
    for (Lid l = base_lid_[id]; l < base_lid_[id] + old_count && l < lid_owner_.size(); ++l) {
      lid_owner_[l] = kNoPort;
    }
  }
  if (lid_owner_.size() < base + count) lid_owner_.resize(base + count, kNoPort);
  for (Lid l = base; l < base + count; ++l) lid_owner_[l] = id;
  base_lid_[id] = base;
  lmc_[id] = static_cast<uint8_t>(lmc);
  while (!lid_owner_.empty() && lid_owner_.back() == kNoPort) lid_owner_.pop_back();
  return Status::OK();
}

void Fabric::ClearLids() {
  lid_owner_.clear();
  std::fill(base_lid_.begin(), base_lid_.end(), 0);
  std::fill(lmc_.begin(), lmc_.end(), 0);
}

PortRef Fabric::lid_owner(Lid lid) const {
  if (lid >= lid_owner_.size() || lid_owner_[lid] == kNoPort) return {};
  return port_ref(lid_owner_[lid]);
}

std::string_view Fabric::hostname(NodeId n) const { return hostname_[n]; }

NodeId Fabric::FindByName(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? kNoNode : it->second;
}

NodeId Fabric::FindByNodeGuid(Guid guid) const {
  auto it = by_node_guid_.find(guid);
  return it == by_node_guid_.end() ? kNoNode : it->second;
}

PortRef Fabric::FindByPortGuid(Guid guid) const {
  // Several ports may carry the same GUID when some of them only have a default (an uncabled
  // port of a dual-port HCA whose neighbour's node GUID is its own + 1): the port in use wins,
  // then the lowest slot, so the answer does not depend on the order GUIDs were set in.
  auto [first, last] = by_port_guid_.equal_range(guid);
  PortId best = kNoPort;
  for (auto it = first; it != last; ++it) {
    const PortId id = it->second;
    if (best == kNoPort || std::pair(!port_in_use(id), id) < std::pair(!port_in_use(best), best)) {
      best = id;
    }
  }
  return best == kNoPort ? PortRef{} : port_ref(best);
}

std::vector<PortRef> Fabric::Endpoints() const {
  std::vector<PortRef> out;
  for (NodeId h : hcas_) {
    for (int p = 1; p <= num_ports_[h]; ++p) {
      if (peer_[port_id(h, p)] != kNoPort) out.push_back({h, p});
    }
  }
  return out;
}

Status Fabric::CheckEndpointLids() const {
  for (const PortRef& e : Endpoints()) {
    if (base_lid(e) == 0) {
      return Status::InvalidArgument("HCA '" + name(e.node) + "' port " + std::to_string(e.port) +
                                     " has no LID");
    }
  }
  return Status::OK();
}

}  // namespace sar
