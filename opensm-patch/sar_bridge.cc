// sar_bridge: libsar behind the plain C interface the OpenSM plugin uses (see sar_bridge.h).
#include "sar_bridge.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sar/deadlock.h"
#include "sar/engine.h"
#include "sar/fabric.h"
#include "sar/fabric_order.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"
#include "sar/jobs.h"
#include "sar/lft.h"
#include "sar/node_classes.h"
#include "sar/status.h"
#include "sar/trace.h"

struct SarBridgeResult {
  std::string engine_used;
  sar::LftSet lfts;
  sar::VirtualLayers layers;
  int num_layers = 1;
  std::vector<int> switch_of_input;  // input node -> switch index, -1 for HCAs
  double route_ms = 0;
  double check_ms = 0;
  std::vector<std::string> notes;
};

namespace {

void SetError(const std::string& msg, char* err, size_t err_size) {
  if (err == nullptr || err_size == 0) return;
  std::snprintf(err, err_size, "%s", msg.c_str());
}

bool CopyString(const std::string& value, char* dst, size_t dst_size) {
  if (value.size() + 1 > dst_size) return false;
  std::memcpy(dst, value.c_str(), value.size() + 1);
  return true;
}

// Builds the libsar fabric with nodes in canonical order (sar::CanonicalNodeOrder, which
// `sar-route --canonical-order` uses too): the engines break ties by node order, and OpenSM's
// tables must not depend on the order its maps happen to hold. *canon_of_input maps input
// node -> fabric NodeId.
sar::Status BuildFabric(const SarBridgeFabric& in, sar::Fabric* f,
                        std::vector<sar::NodeId>* canon_of_input) {
  sar::Fabric as_given;  // node i = input node i
  for (int i = 0; i < in.num_nodes; ++i) {
    const SarBridgeNode& n = in.nodes[i];
    if (n.num_ports < 1 || n.num_ports > sar::kMaxPorts) {
      return sar::Status::InvalidArgument("node " + sar::GuidString(n.guid) + " has " +
                                          std::to_string(n.num_ports) + " ports");
    }
    const char* prefix = n.is_switch ? "S-" : "H-";
    const std::string hex = sar::GuidString(n.guid).substr(2);
    std::string err;
    const sar::NodeId id =
        as_given.AddNode(n.is_switch ? sar::NodeKind::kSwitch : sar::NodeKind::kHca, n.num_ports,
                         n.guid, prefix + hex, n.description ? n.description : "", &err);
    if (id == sar::kNoNode) return sar::Status::InvalidArgument(err);
  }
  auto ref = [&](int node, int port, sar::PortRef* out) {
    if (node < 0 || node >= in.num_nodes) return false;
    *out = {node, port};
    return port >= 0 && port <= as_given.num_ports(node);
  };
  for (int i = 0; i < in.num_ports; ++i) {
    const SarBridgePort& p = in.ports[i];
    sar::PortRef r;
    if (!ref(p.node, p.port, &r)) {
      return sar::Status::InvalidArgument("port entry " + std::to_string(i) + " out of range");
    }
    if (p.guid != 0) as_given.set_port_guid(r, p.guid);
    if (p.base_lid != 0) SAR_RETURN_IF_ERROR(as_given.SetLid(r, p.base_lid, p.lmc));
  }
  for (int i = 0; i < in.num_links; ++i) {
    const SarBridgeLink& l = in.links[i];
    sar::PortRef a, b;
    if (!ref(l.node_a, l.port_a, &a) || !ref(l.node_b, l.port_b, &b)) {
      return sar::Status::InvalidArgument("link entry " + std::to_string(i) + " out of range");
    }
    SAR_RETURN_IF_ERROR(as_given.Connect(a, b));
  }
  SAR_RETURN_IF_ERROR(sar::CanonicalNodeOrder(as_given, f));
  canon_of_input->resize(in.num_nodes);
  for (int i = 0; i < in.num_nodes; ++i) {
    (*canon_of_input)[i] = f->FindByNodeGuid(in.nodes[i].guid);
  }
  for (const sar::PortRef& e : f->Endpoints()) {
    if (f->base_lid(e) == 0) {
      return sar::Status::InvalidArgument("HCA port " + sar::GuidString(f->port_guid(e)) +
                                          " has no LID");
    }
  }
  return sar::Status::OK();
}

// The job mapping; a missing or empty file means "no jobs", which the caller turns into dfsssp.
sar::Status LoadMapping(const std::string& path, bool* missing, sar::JobMapping* mapping) {
  *missing = false;
  if (path.empty()) {
    *missing = true;
    return sar::Status::OK();
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    *missing = true;
    return sar::Status::OK();
  }
  return sar::ReadJobMapping(path, mapping);
}

sar::Status LoadClasses(const SarBridgeConfig& c, const sar::Fabric& f, sar::NodeClasses* classes,
                        std::vector<std::string>* notes) {
  std::vector<sar::Guid> cn, io;
  const bool has_cn = c.cn_guid_file[0] != '\0';
  const bool has_io = c.io_guid_file[0] != '\0';
  if (has_cn) SAR_RETURN_IF_ERROR(sar::ReadGuidFile(c.cn_guid_file, &cn));
  if (has_io) SAR_RETURN_IF_ERROR(sar::ReadGuidFile(c.io_guid_file, &io));
  std::vector<std::string> unknown;
  SAR_RETURN_IF_ERROR(
      sar::MakeNodeClasses(f, has_cn ? &cn : nullptr, has_io ? &io : nullptr, classes, &unknown));
  for (const std::string& g : unknown) {
    notes->push_back("GUID " + g + " of the class files is not an HCA of the fabric");
  }
  return sar::Status::OK();
}

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

sar::Status Route(const SarBridgeFabric& in, const SarBridgeConfig& c, SarBridgeResult* r) {
  sar::Fabric f;
  std::vector<sar::NodeId> canon;
  SAR_RETURN_IF_ERROR(BuildFabric(in, &f, &canon));
  r->switch_of_input.assign(in.num_nodes, -1);
  for (int i = 0; i < in.num_nodes; ++i) r->switch_of_input[i] = f.switch_index(canon[i]);

  sar::JobMapping mapping;
  bool missing = false;
  SAR_RETURN_IF_ERROR(LoadMapping(c.mapping_file, &missing, &mapping));
  std::vector<std::string> unknown_hosts;
  std::vector<sar::ResolvedJob> jobs = sar::ResolveJobs(f, mapping, &unknown_hosts);
  for (const std::string& h : unknown_hosts) {
    r->notes.push_back("host '" + h + "' of " + c.mapping_file + " is not in the fabric");
  }
  r->engine_used = c.engine;
  if (r->engine_used == "sar" && (missing || mapping.jobs.empty())) {
    r->engine_used = "dfsssp";
    r->notes.push_back(
        std::string("job mapping ") + (c.mapping_file[0] ? c.mapping_file : "(none configured)") +
        (missing ? " does not exist" : " lists no jobs") + ": routing with plain dfsssp");
  }
  std::string alltoall;
  for (const sar::Job& j : mapping.jobs) {
    if (j.pattern == sar::JobPattern::kAllToAll) alltoall += (alltoall.empty() ? "" : " ") + j.id;
  }
  if (!alltoall.empty()) {
    r->notes.push_back("alltoall jobs routed as ordinary SAR jobs (no FORS in the plugin): " +
                       alltoall);
  }
  const std::unique_ptr<sar::RoutingEngine> engine = sar::MakeRoutingEngine(r->engine_used);
  if (engine == nullptr) {
    return sar::Status::InvalidArgument("unknown engine '" + r->engine_used + "'");
  }
  sar::RoutingInput rin;
  rin.fabric = &f;
  rin.num_vls = c.num_vls;
  rin.threads = c.threads;
  rin.allow_disconnected = c.allow_disconnected != 0;
  if (!jobs.empty()) rin.jobs = &jobs;
  sar::NodeClasses classes;
  if (c.cn_guid_file[0] != '\0' || c.io_guid_file[0] != '\0') {
    SAR_RETURN_IF_ERROR(LoadClasses(c, f, &classes, &r->notes));
    rin.classes = &classes;
  }
  auto t0 = std::chrono::steady_clock::now();
  sar::RoutingOutput out;
  sar::Status s = engine->Route(rin, &out);
  for (const std::string& n : out.notes) r->notes.push_back(r->engine_used + ": " + n);
  SAR_RETURN_IF_ERROR(s);
  r->route_ms = MsSince(t0);

  // The checks sar-route route makes before it writes anything.
  t0 = std::chrono::steady_clock::now();
  sar::TraceOptions topts;
  topts.threads = c.threads;
  topts.check_min_hop = false;
  sar::TraceReport trace;
  SAR_RETURN_IF_ERROR(sar::TraceAll(f, out.lfts, topts, &trace));
  if (trace.loops > 0 || (!rin.allow_disconnected && trace.unreachable > 0)) {
    std::string msg = r->engine_used + " produced invalid tables (" +
                      std::to_string(trace.unreachable) + " unreachable pairs, " +
                      std::to_string(trace.loops) + " loops)";
    if (!trace.examples.empty()) msg += ", e.g. " + trace.examples.front();
    return sar::Status::Failed(msg);
  }
  if (out.layers.size() > 0) {
    sar::DeadlockReport dl;
    SAR_RETURN_IF_ERROR(sar::CheckDeadlock(f, out.lfts, &out.layers, &dl));
    if (!dl.deadlock_free) {
      return sar::Status::Failed(r->engine_used + ": virtual layer " +
                                 std::to_string(dl.cyclic_layer) + " has a cyclic dependency");
    }
  }
  if (out.num_layers > c.num_vls) {
    return sar::Status::Failed(r->engine_used + " needs " + std::to_string(out.num_layers) +
                               " layers but num_vls is " + std::to_string(c.num_vls));
  }
  r->check_ms = MsSince(t0);
  r->lfts = std::move(out.lfts);
  r->layers = std::move(out.layers);
  r->num_layers = out.num_layers;
  return sar::Status::OK();
}

// One "key value" line of the config file.
sar::Status SetKey(const std::string& key, const std::string& value, const std::string& where,
                   SarBridgeConfig* c) {
  auto int_value = [&](int lo, int hi, int* out) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
      return sar::Status::Corruption(where + ": " + key + " must be an integer in " +
                                     std::to_string(lo) + ".." + std::to_string(hi) + ", not '" +
                                     value + "'");
    }
    *out = static_cast<int>(v);
    return sar::Status::OK();
  };
  auto path_value = [&](char* dst) {
    if (!CopyString(value, dst, SAR_BRIDGE_PATH_MAX)) {
      return sar::Status::Corruption(where + ": " + key + " path too long");
    }
    return sar::Status::OK();
  };
  if (key == "engine") {
    if (value != "sar" && value != "dfsssp") {
      return sar::Status::Corruption(where + ": engine must be sar or dfsssp, not '" + value + "'");
    }
    CopyString(value, c->engine, sizeof c->engine);
    return sar::Status::OK();
  }
  if (key == "mapping_file") return path_value(c->mapping_file);
  if (key == "cn_guid_file") return path_value(c->cn_guid_file);
  if (key == "io_guid_file") return path_value(c->io_guid_file);
  if (key == "num_vls") return int_value(1, 15, &c->num_vls);
  if (key == "threads") return int_value(0, 1024, &c->threads);
  if (key == "allow_disconnected") {
    if (value == "true" || value == "TRUE" || value == "1") {
      c->allow_disconnected = 1;
    } else if (value == "false" || value == "FALSE" || value == "0") {
      c->allow_disconnected = 0;
    } else {
      return sar::Status::Corruption(where + ": allow_disconnected must be true or false, not '" +
                                     value + "'");
    }
    return sar::Status::OK();
  }
  return sar::Status::Corruption(where + ": unknown key '" + key + "'");
}

sar::Status ParseConfig(const std::string& text, const std::string& path, SarBridgeConfig* c) {
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const char* ws = " \t\r";
    const size_t b = line.find_first_not_of(ws);
    if (b == std::string::npos) continue;
    const size_t e = line.find_last_not_of(ws);
    line = line.substr(b, e - b + 1);
    const size_t sp = line.find_first_of(ws);
    const std::string where = path + ":" + std::to_string(line_no);
    if (sp == std::string::npos) {
      return sar::Status::Corruption(where + ": expected '<key> <value>', got '" + line + "'");
    }
    const std::string key = line.substr(0, sp);
    const std::string value = line.substr(line.find_first_not_of(ws, sp));
    SAR_RETURN_IF_ERROR(SetKey(key, value, where, c));
  }
  return sar::Status::OK();
}

}  // namespace

extern "C" {

void SarBridgeConfigInit(SarBridgeConfig* config) {
  std::memset(config, 0, sizeof *config);
  CopyString("sar", config->engine, sizeof config->engine);
  config->num_vls = 8;
  config->threads = 0;
  config->allow_disconnected = 0;
}

int SarBridgeReadConfig(const char* path, SarBridgeConfig* config, char* err, size_t err_size) {
  std::string text;
  sar::Status s = sar::ReadFileToString(path, &text);
  if (s.ok()) s = ParseConfig(text, path, config);
  if (s.ok()) return 0;
  SetError(s.ToString(), err, err_size);
  return 1;
}

int SarBridgeRoute(const SarBridgeFabric* fabric, const SarBridgeConfig* config,
                   SarBridgeResult** out, char* err, size_t err_size) {
  *out = nullptr;
  auto r = std::make_unique<SarBridgeResult>();
  const sar::Status s = Route(*fabric, *config, r.get());
  if (!s.ok()) {
    SetError(s.ToString(), err, err_size);
    return 1;
  }
  *out = r.release();
  return 0;
}

void SarBridgeFree(SarBridgeResult* result) { delete result; }

const char* SarBridgeEngineUsed(const SarBridgeResult* r) { return r->engine_used.c_str(); }
uint32_t SarBridgeMaxLid(const SarBridgeResult* r) { return r->lfts.max_lid(); }

const uint8_t* SarBridgeLftRow(const SarBridgeResult* r, int node) {
  if (node < 0 || node >= static_cast<int>(r->switch_of_input.size())) return nullptr;
  const int sw = r->switch_of_input[node];
  return sw < 0 ? nullptr : r->lfts.row(sw);
}

int SarBridgeLayer(const SarBridgeResult* r, uint32_t slid, uint32_t dlid) {
  return r->layers.get(slid, dlid);
}
int SarBridgeNumLayers(const SarBridgeResult* r) { return r->num_layers; }
double SarBridgeRouteMs(const SarBridgeResult* r) { return r->route_ms; }
double SarBridgeCheckMs(const SarBridgeResult* r) { return r->check_ms; }
int SarBridgeNumNotes(const SarBridgeResult* r) { return static_cast<int>(r->notes.size()); }
const char* SarBridgeNote(const SarBridgeResult* r, int i) { return r->notes[i].c_str(); }

}  // extern "C"
