#include "leaf_map.h"

#include <cctype>
#include <charconv>
#include <utility>

#include "sar/io/file_util.h"
#include "sar/model/jobs.h"
#include "sources/hostlist.h"

namespace sar::filterd {

LeafMap::Port* LeafMap::AddPort(std::string_view host, std::string_view leaf_name) {
  auto [leaf, new_leaf] = leaf_index_.try_emplace(std::string(leaf_name), num_leaves());
  if (new_leaf) leaf_names_.emplace_back(leaf_name);
  auto [h, new_host] = host_index_.try_emplace(std::string(host), num_hosts());
  if (new_host) {
    host_names_.emplace_back(host);
    ports_.emplace_back();
  }
  ports_[h->second].push_back({leaf->second, kAnyRail});
  return &ports_[h->second].back();
}

void LeafMap::Add(std::string_view host, std::string_view leaf_name) {
  const std::vector<Port>* known = PortsOf(host);
  auto it = leaf_index_.find(std::string(leaf_name));
  if (known != nullptr && it != leaf_index_.end()) {
    for (const Port& p : *known) {
      if (p.leaf == it->second) return;
    }
  }
  AddPort(host, leaf_name);
}

void LeafMap::AddHcaPort(std::string_view host, std::string_view leaf_name,
                         std::string_view description, Guid guid) {
  AddPort(host, leaf_name);
  const int h = host_index_.at(std::string(host));
  named_.push_back({h, static_cast<int>(ports_[h].size()) - 1, std::string(description), guid});
}

void LeafMap::AssignRails() {
  std::vector<NamedHcaPort> ports;
  ports.reserve(named_.size());
  for (const Named& n : named_) ports.push_back({host_names_[n.host], n.description, n.guid});
  const std::vector<int> rails = RailsOfPorts(ports);
  for (size_t i = 0; i < named_.size(); ++i)
    ports_[named_[i].host][named_[i].index].rail = rails[i];
}

std::vector<std::string> LeafMap::Hosts() const { return host_names_; }

Status ReadNodeNameMap(const std::string& path, std::unordered_map<Guid, std::string>* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) continue;
    line.remove_prefix(start);
    const size_t sp = line.find_first_of(" \t");
    std::string_view guid_s = line.substr(0, sp);
    if (guid_s.starts_with("0x") || guid_s.starts_with("0X")) guid_s.remove_prefix(2);
    Guid guid = 0;
    auto [p, ec] = std::from_chars(guid_s.data(), guid_s.data() + guid_s.size(), guid, 16);
    const size_t q1 = line.find('"');
    const size_t q2 = q1 == std::string_view::npos ? q1 : line.find('"', q1 + 1);
    if (ec != std::errc() || p != guid_s.data() + guid_s.size() || guid_s.empty() ||
        q2 == std::string_view::npos) {
      return Status::Corruption(path + ":" + std::to_string(line_no) +
                                ": expected <guid> \"<name>\"");
    }
    // OpenSM's map names a node by its whole description; the host is its first word.
    std::string_view name = line.substr(q1 + 1, q2 - q1 - 1);
    name = name.substr(0, name.find_first_of(" \t"));
    (*out)[guid] = std::string(name);
  }
  return Status::OK();
}

LeafMap LeafMapFromFabric(const Fabric& fabric,
                          const std::unordered_map<Guid, std::string>& name_map) {
  LeafMap map;
  for (NodeId hca : fabric.hcas()) {
    auto named = name_map.find(fabric.node_guid(hca));
    const std::string_view host =
        named != name_map.end() ? std::string_view(named->second) : fabric.hostname(hca);
    if (host.empty()) continue;
    // Every cabled port, as the router's ResolveJobs maps a host to all its HCA ports.
    for (int port = 1; port <= fabric.num_ports(hca); ++port) {
      const PortRef peer = fabric.peer({hca, port});
      if (peer.valid() && fabric.is_switch(peer.node)) {
        map.AddHcaPort(host, fabric.name(peer.node), fabric.description(hca),
                       fabric.port_guid({hca, port}));
      }
    }
  }
  map.AssignRails();
  return map;
}

namespace {

struct SubnetLstEnd {
  bool is_switch = false;
  bool is_ca = false;
  Guid node_guid = 0;
  std::string_view description;
};

// Parses one "{ TYPE ... NodeGUID:hex ... {desc} ... }" block starting at *pos.
bool ParseSubnetLstEnd(std::string_view line, size_t* pos, SubnetLstEnd* out) {
  const size_t open = line.find("{ ", *pos);
  if (open == std::string_view::npos) return false;
  const size_t type_end = line.find(' ', open + 2);
  if (type_end == std::string_view::npos) return false;
  const std::string_view type = line.substr(open + 2, type_end - open - 2);
  out->is_switch = type == "SW";
  out->is_ca = type.starts_with("CA");
  const size_t g = line.find("NodeGUID:", type_end);
  if (g == std::string_view::npos) return false;
  const char* first = line.data() + g + 9;
  auto [p, ec] = std::from_chars(first, line.data() + line.size(), out->node_guid, 16);
  if (ec != std::errc() || p == first) return false;
  const size_t d = line.find(" {", static_cast<size_t>(p - line.data()));
  const size_t d_end = d == std::string_view::npos ? d : line.find("} ", d + 2);
  if (d_end == std::string_view::npos) return false;
  out->description = line.substr(d + 2, d_end - d - 2);
  const size_t close = line.find(" }", d_end + 1);
  if (close == std::string_view::npos) return false;
  *pos = close + 2;
  return true;
}

}  // namespace

Status ParseSubnetLst(std::string_view text, const std::string& source,
                      const std::unordered_map<Guid, std::string>& name_map, LeafMap* out) {
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    SubnetLstEnd a, b;
    size_t at = 0;
    if (!ParseSubnetLstEnd(line, &at, &a) || !ParseSubnetLstEnd(line, &at, &b)) {
      return Status::Corruption(
          source + ":" + std::to_string(line_no) +
          ": expected \"{ <type> ... NodeGUID:<hex> ... {<description>} ... } "
          "{ ... }\"");
    }
    if (b.is_ca && a.is_switch) std::swap(a, b);
    if (!a.is_ca || !b.is_switch) continue;
    auto named = name_map.find(a.node_guid);
    std::string_view host = a.description;
    if (named != name_map.end()) {
      host = named->second;
    } else {
      host = host.substr(0, host.find_first_of(" \t"));
    }
    if (host.empty()) continue;
    // Switch descriptions need not be unique; the GUID makes the leaf's name so. The dump
    // gives node GUIDs: the rail rule's last resort orders a host's ports by those.
    out->AddHcaPort(host, std::string(b.description) + "/" + GuidString(b.node_guid), a.description,
                    a.node_guid);
  }
  out->AssignRails();
  return Status::OK();
}

Status ReadSubnetLst(const std::string& path, const std::unordered_map<Guid, std::string>& name_map,
                     LeafMap* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseSubnetLst(text, path, name_map, out);
}

Status ParseTopologyConf(std::string_view text, const std::string& source, LeafMap* out) {
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string_view::npos) line = line.substr(0, hash);
    std::string switch_name, nodes;
    size_t i = 0;
    bool any = false;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i >= line.size()) break;
      size_t j = i;
      while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
      const std::string_view word = line.substr(i, j - i);
      i = j;
      any = true;
      const size_t eq = word.find('=');
      if (eq == std::string_view::npos) {
        return Status::Corruption(source + ":" + std::to_string(line_no) +
                                  ": expected Key=Value, got '" + std::string(word) + "'");
      }
      std::string key(word.substr(0, eq));
      for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (key == "switchname") switch_name = word.substr(eq + 1);
      if (key == "nodes") nodes = word.substr(eq + 1);
    }
    if (!any) continue;
    if (switch_name.empty()) {
      return Status::Corruption(source + ":" + std::to_string(line_no) + ": missing SwitchName=");
    }
    if (nodes.empty()) continue;
    std::vector<std::string> hosts;
    Status s = ExpandHostlist(nodes, &hosts);
    if (!s.ok())
      return Status::Corruption(source + ":" + std::to_string(line_no) + ": " + s.message());
    for (const std::string& h : hosts) out->Add(h, switch_name);
  }
  return Status::OK();
}

Status ReadTopologyConf(const std::string& path, LeafMap* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseTopologyConf(text, path, out);
}

}  // namespace sar::filterd
