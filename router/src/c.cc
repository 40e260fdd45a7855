// The C API (sar/c.h) over the routing pass. Every entry point catches everything: a C caller
// (OpenSM) must never see a C++ exception, bad_alloc included.
#include "sar/c.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/io/file_util.h"
#include "sar/migration/migration_coordinator.h"
#include "sar/migration/migration_wire.h"
#include "sar/model/fabric.h"
#include "sar/model/fabric_order.h"
#include "sar/model/lft.h"
#include "sar/pass/routing_pass.h"
#include "sar/status.h"

struct sar_fabric_t {
  sar::Fabric fabric;                // canonical order
  std::vector<int> switch_of_input;  // input node -> switch index, -1 for HCAs
};

struct sar_options_t {
  sar::RoutingOptions options;
  sar::RoutingMemory* memory = nullptr;  // not owned (sar_options_set_memory)
};

struct sar_memory_t {
  sar::RoutingMemory memory;
};

struct sar_result_t {
  std::string engine;
  sar::LftSet lfts;
  sar::VirtualLayers layers;
  int num_layers = 1;
  std::vector<int> switch_of_input;
  double route_ms = 0;
  double check_ms = 0;
  std::vector<std::string> notes;
  std::string mapping_path;
  sar::JobMapping mapping;  // the job set the tables were routed for
  std::vector<sar::ForsJobPlan> fors;
  std::vector<std::string> fors_rows;       // made while the fabric is known (host names, LIDs)
  std::vector<sar::ForsJobNone> fors_none;  // alltoall jobs without FORS, and why
};

struct sar_mig_t {
  explicit sar_mig_t(const sar::MigrationConfig& c) : coordinator(c) {}
  sar::MigrationCoordinator coordinator;
};

struct sar_mig_inbox_t {
  sar::MigAckInbox inbox;
};

namespace {

void SetError(char** errptr, const std::string& msg) {
  if (errptr == nullptr) return;
  std::free(*errptr);
  *errptr = static_cast<char*>(std::malloc(msg.size() + 1));
  if (*errptr != nullptr) std::memcpy(*errptr, msg.c_str(), msg.size() + 1);
}

// Runs `body` (returning a Status), turning exceptions into error messages. True on success.
template <class Body>
bool Guarded(char** errptr, Body body) {
  try {
    const sar::Status s = body();
    if (s.ok()) return true;
    SetError(errptr, s.ToString());
  } catch (const std::bad_alloc&) {
    SetError(errptr, "out of memory");
  } catch (const std::exception& e) {
    SetError(errptr, std::string("internal error: ") + e.what());
  } catch (...) {
    SetError(errptr, "internal error");
  }
  return false;
}

static_assert(SAR_SPEED_XDR == static_cast<int>(sar::LaneSpeed::kXdr) &&
                  SAR_SPEED_SDR == static_cast<int>(sar::LaneSpeed::kSdr),
              "SAR_SPEED_* follow sar::LaneSpeed");

// The fabric with nodes in canonical order (sar::CanonicalNodeOrder): OpenSM's tables must not
// depend on the order its maps happen to hold.
sar::Status BuildFabric(const sar_node_t* nodes, int num_nodes, const sar_port_t* ports,
                        int num_ports, const sar_link_t* links, int num_links, sar_fabric_t* out) {
  if (num_nodes < 0 || num_ports < 0 || num_links < 0 || (num_nodes > 0 && nodes == nullptr) ||
      (num_ports > 0 && ports == nullptr) || (num_links > 0 && links == nullptr)) {
    return sar::Status::InvalidArgument("sar_fabric_create: bad array");
  }
  sar::Fabric as_given;  // node i = input node i
  for (int i = 0; i < num_nodes; ++i) {
    const sar_node_t& n = nodes[i];
    if (n.num_ports < 1 || n.num_ports > sar::kMaxPorts) {
      return sar::Status::InvalidArgument("node " + sar::GuidString(n.guid) + " has " +
                                          std::to_string(n.num_ports) + " ports");
    }
    const std::string name = (n.is_switch ? "S-" : "H-") + sar::GuidString(n.guid).substr(2);
    std::string err;
    const sar::NodeId id =
        as_given.AddNode(n.is_switch ? sar::NodeKind::kSwitch : sar::NodeKind::kHca, n.num_ports,
                         n.guid, name, n.description ? n.description : "", &err);
    if (id == sar::kNoNode) return sar::Status::InvalidArgument(err);
  }
  auto ref = [&](int node, int port, sar::PortRef* r) {
    if (node < 0 || node >= num_nodes) return false;
    *r = {node, port};
    return port >= 0 && port <= as_given.num_ports(node);
  };
  for (int i = 0; i < num_ports; ++i) {
    const sar_port_t& p = ports[i];
    sar::PortRef r;
    if (!ref(p.node, p.port, &r)) {
      return sar::Status::InvalidArgument("port entry " + std::to_string(i) + " out of range");
    }
    if (p.guid != 0) as_given.set_port_guid(r, p.guid);
    if (p.base_lid != 0) SAR_RETURN_IF_ERROR(as_given.SetLid(r, p.base_lid, p.lmc));
  }
  for (int i = 0; i < num_links; ++i) {
    const sar_link_t& l = links[i];
    sar::PortRef a, b;
    if (!ref(l.node_a, l.port_a, &a) || !ref(l.node_b, l.port_b, &b)) {
      return sar::Status::InvalidArgument("link entry " + std::to_string(i) + " out of range");
    }
    SAR_RETURN_IF_ERROR(as_given.Connect(a, b));
    if (l.width != 0 || l.speed != 0) {
      const sar::LinkRate rate{static_cast<uint8_t>(l.width), static_cast<sar::LaneSpeed>(l.speed)};
      if (l.width < 0 || l.width > 12 || l.speed < SAR_SPEED_SDR || l.speed > SAR_SPEED_XDR ||
          rate.mbps() == 0) {
        return sar::Status::InvalidArgument("link entry " + std::to_string(i) + " has width " +
                                            std::to_string(l.width) + ", speed " +
                                            std::to_string(l.speed));
      }
      as_given.set_port_rate(a, rate);
      as_given.set_port_rate(b, rate);
    }
  }
  SAR_RETURN_IF_ERROR(sar::CanonicalNodeOrder(as_given, &out->fabric));
  const sar::Fabric& f = out->fabric;
  SAR_RETURN_IF_ERROR(f.CheckEndpointLids());
  out->switch_of_input.resize(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    out->switch_of_input[i] = f.switch_index(f.FindByNodeGuid(nodes[i].guid));
  }
  return sar::Status::OK();
}

sar::Status Route(const sar_fabric_t& fabric, const sar_options_t& c_options, sar_result_t* r,
                  sar::LftSet previous = sar::LftSet(),
                  const sar::JobMapping* previous_mapping = nullptr) {
  const sar::RoutingOptions& options = c_options.options;
  sar::RoutingRequest request;
  request.fabric = &fabric.fabric;
  request.options = options;
  request.memory = c_options.memory;
  request.previous = std::move(previous);
  if (previous_mapping != nullptr) request.previous_mapping = *previous_mapping;
  sar::RoutingResult result;
  const sar::Status s = sar::RunRoutingPass(request, &result);
  const sar::RoutingInputs& in = result.inputs;
  if (in.fabric == nullptr) return s;  // the inputs stage failed: nothing to tell
  r->engine = in.engine;
  r->notes = in.notes;
  for (const std::string& n : result.output.notes) r->notes.push_back(in.engine + ": " + n);
  SAR_RETURN_IF_ERROR(s);
  sar::RoutingOutput& out = result.output;
  const sar::ValidationReport& report = result.report;
  std::vector<sar::ForsJobPlan>& fors = result.fors;
  std::vector<sar::ForsJobNone>& fors_none = result.fors_none;
  r->route_ms = out.paths_ms + out.layers_ms;
  r->check_ms = report.check_ms;
  r->lfts = std::move(out.lfts);
  r->layers = std::move(out.layers);
  r->num_layers = out.num_layers;
  r->switch_of_input = fabric.switch_of_input;
  r->mapping_path = options.mapping_path;
  r->mapping = in.mapping;
  for (const sar::ForsJobPlan& plan : fors) {
    r->fors_rows.push_back(sar::FormatForsScheduleRows(fabric.fabric, plan));
  }
  r->fors = std::move(fors);
  r->fors_none = std::move(fors_none);
  return sar::Status::OK();
}

}  // namespace

// Outside the extern "C" block: a C++ return type under C linkage is an error for clang.
namespace {
sar::PortGid Gid(sar_mig_gid_t g) { return {g.prefix, g.guid}; }
}  // namespace

extern "C" {

sar_fabric_t* sar_fabric_create(const sar_node_t* nodes, int num_nodes, const sar_port_t* ports,
                                int num_ports, const sar_link_t* links, int num_links,
                                char** errptr) {
  sar_fabric_t* result = nullptr;
  Guarded(errptr, [&] {
    auto f = std::make_unique<sar_fabric_t>();
    SAR_RETURN_IF_ERROR(BuildFabric(nodes, num_nodes, ports, num_ports, links, num_links, f.get()));
    result = f.release();
    return sar::Status::OK();
  });
  return result;
}

void sar_fabric_destroy(sar_fabric_t* fabric) { delete fabric; }

sar_options_t* sar_options_create(void) { return new (std::nothrow) sar_options_t; }
void sar_options_destroy(sar_options_t* options) { delete options; }

// Setters assign std::string, which may throw bad_alloc: swallow it (the value stays unchanged;
// the routing pass then reports what it was given).
void sar_options_set_engine(sar_options_t* o, const char* engine) {
  Guarded(nullptr, [&] {
    o->options.engine = engine ? engine : "";
    return sar::Status::OK();
  });
}
void sar_options_set_mapping_file(sar_options_t* o, const char* path, int optional) {
  Guarded(nullptr, [&] {
    o->options.mapping_path = path ? path : "";
    o->options.mapping_optional = optional != 0;
    return sar::Status::OK();
  });
}
void sar_options_set_node_class_files(sar_options_t* o, const char* cn, const char* io) {
  Guarded(nullptr, [&] {
    o->options.cn_guids_path = cn ? cn : "";
    o->options.io_guids_path = io ? io : "";
    return sar::Status::OK();
  });
}
void sar_options_set_num_vls(sar_options_t* o, int num_vls) { o->options.num_vls = num_vls; }
void sar_options_set_max_layers(sar_options_t* o, int max_layers) {
  o->options.max_layers = max_layers;
}
void sar_options_set_threads(sar_options_t* o, int threads) { o->options.threads = threads; }
void sar_options_set_allow_disconnected(sar_options_t* o, int allow) {
  o->options.allow_disconnected = allow != 0;
}
void sar_options_set_sar_refine(sar_options_t* o, int refine, double all_pairs_budget) {
  o->options.sar_refine = refine != 0;
  o->options.sar_all_pairs_budget = all_pairs_budget > 0 ? all_pairs_budget : 0;
}
void sar_options_set_sar_refine_work(sar_options_t* o, uint64_t steps) {
  o->options.sar_refine_work =
      steps == 0 ? sar::kDefaultSarRefineWork : std::min(steps, sar::kMaxSarRefineWork);
}
void sar_options_set_sar_no_regret(sar_options_t* o, int on) { o->options.sar_no_regret = on != 0; }
void sar_options_set_fors_only_where_faster(sar_options_t* o, int on) {
  o->options.fors_only_where_faster = on != 0;
}
void sar_options_set_job_hca_pairs_all(sar_options_t* o, int all) {
  o->options.job_hca_pairs = all != 0 ? sar::JobHcaPairs::kAll : sar::JobHcaPairs::kRails;
}
void sar_options_set_migration(sar_options_t* o, int on) { o->options.migration = on != 0; }
void sar_options_set_delta(sar_options_t* o, int on) { o->options.delta = on != 0; }

sar_memory_t* sar_memory_create(void) {
  sar_memory_t* m = nullptr;
  Guarded(nullptr, [&] {  // new may throw bad_alloc
    m = new sar_memory_t;
    return sar::Status::OK();
  });
  return m;
}
void sar_memory_destroy(sar_memory_t* memory) { delete memory; }
void sar_options_set_memory(sar_options_t* o, sar_memory_t* memory) {
  o->memory = memory != nullptr ? &memory->memory : nullptr;
}

sar_result_t* sar_route(const sar_fabric_t* fabric, const sar_options_t* options, char** errptr) {
  sar_result_t* result = nullptr;
  Guarded(errptr, [&] {
    if (fabric == nullptr || options == nullptr) {
      return sar::Status::InvalidArgument("sar_route: null fabric or options");
    }
    auto r = std::make_unique<sar_result_t>();
    SAR_RETURN_IF_ERROR(Route(*fabric, *options, r.get()));
    result = r.release();
    return sar::Status::OK();
  });
  return result;
}

sar_result_t* sar_route_from(const sar_fabric_t* fabric, const sar_options_t* options,
                             uint32_t max_lid, const uint8_t* const* rows, char** errptr) {
  return sar_route_from_previous(fabric, options, max_lid, rows, nullptr, errptr);
}

sar_result_t* sar_route_from_previous(const sar_fabric_t* fabric, const sar_options_t* options,
                                      uint32_t max_lid, const uint8_t* const* rows,
                                      const sar_result_t* previous_result, char** errptr) {
  sar_result_t* result = nullptr;
  Guarded(errptr, [&] {
    if (fabric == nullptr || options == nullptr || rows == nullptr || max_lid > 0xFFFF) {
      return sar::Status::InvalidArgument("sar_route_from: bad argument");
    }
    const sar::Fabric& f = fabric->fabric;
    // Rows beyond the fabric's LIDs cannot matter; LIDs the rows lack stay kNoRoute.
    sar::LftSet previous(f);
    const sar::Lid top = std::min<sar::Lid>(static_cast<sar::Lid>(max_lid), f.max_lid());
    for (size_t i = 0; i < fabric->switch_of_input.size(); ++i) {
      const int sw = fabric->switch_of_input[i];
      if (sw >= 0 && rows[i] != nullptr) std::memcpy(previous.mutable_row(sw), rows[i], top + 1);
    }
    auto r = std::make_unique<sar_result_t>();
    SAR_RETURN_IF_ERROR(Route(*fabric, *options, r.get(), std::move(previous),
                              previous_result != nullptr ? &previous_result->mapping : nullptr));
    result = r.release();
    return sar::Status::OK();
  });
  return result;
}

void sar_result_destroy(sar_result_t* result) { delete result; }

const char* sar_result_engine(const sar_result_t* r) { return r->engine.c_str(); }
uint32_t sar_result_max_lid(const sar_result_t* r) { return r->lfts.max_lid(); }
const uint8_t* sar_result_lft_row(const sar_result_t* r, int node) {
  if (node < 0 || node >= static_cast<int>(r->switch_of_input.size())) return nullptr;
  const int sw = r->switch_of_input[node];
  return sw < 0 ? nullptr : r->lfts.row(sw);
}
int sar_result_layer(const sar_result_t* r, uint32_t slid, uint32_t dlid) {
  return r->layers.get(slid, dlid);
}
int sar_result_num_layers(const sar_result_t* r) { return r->num_layers; }
double sar_result_route_ms(const sar_result_t* r) { return r->route_ms; }
double sar_result_check_ms(const sar_result_t* r) { return r->check_ms; }
int sar_result_num_notes(const sar_result_t* r) { return static_cast<int>(r->notes.size()); }
const char* sar_result_note(const sar_result_t* r, int i) {
  return i < 0 || i >= static_cast<int>(r->notes.size()) ? nullptr : r->notes[i].c_str();
}

int sar_result_num_fors_jobs(const sar_result_t* r) { return static_cast<int>(r->fors.size()); }
int sar_result_num_fors_none(const sar_result_t* r) {
  return static_cast<int>(r->fors_none.size());
}
const char* sar_result_fors_none_job(const sar_result_t* r, int i) {
  return i < 0 || i >= static_cast<int>(r->fors_none.size()) ? nullptr
                                                             : r->fors_none[i].job_id.c_str();
}
const char* sar_result_fors_none_reason(const sar_result_t* r, int i) {
  return i < 0 || i >= static_cast<int>(r->fors_none.size()) ? nullptr
                                                             : r->fors_none[i].reason.c_str();
}

int sar_result_publish_fors_schedules(const sar_result_t* r, uint64_t epoch, long group,
                                      char** errptr) {
  int current = 0;
  const bool ok = Guarded(errptr, [&] {
    if (r == nullptr)
      return sar::Status::InvalidArgument("sar_result_publish_fors_schedules: null");
    if (r->mapping_path.empty()) return sar::Status::OK();
    return sar::PublishForsSchedules(r->mapping_path, r->fors, r->fors_rows, r->fors_none, epoch,
                                     group < 0 ? static_cast<gid_t>(-1) : static_cast<gid_t>(group),
                                     &current);
  });
  return ok ? current : -1;
}

int sar_check_tables(const sar_fabric_t* fabric, const sar_options_t* options, uint32_t max_lid,
                     const uint8_t* const* rows, const sar_route_layer_t* layers,
                     size_t num_layer_entries, char** errptr) {
  return Guarded(errptr, [&] {
    if (fabric == nullptr || options == nullptr || rows == nullptr ||
        (num_layer_entries > 0 && layers == nullptr) || max_lid > 0xFFFF) {
      return sar::Status::InvalidArgument("sar_check_tables: bad argument");
    }
    const sar::Fabric& f = fabric->fabric;
    sar::LftSet lfts(f.num_switches(), static_cast<sar::Lid>(max_lid));
    for (size_t i = 0; i < fabric->switch_of_input.size(); ++i) {
      const int sw = fabric->switch_of_input[i];
      if (sw < 0) continue;
      if (rows[i] == nullptr) {
        return sar::Status::InvalidArgument("sar_check_tables: no table for switch node " +
                                            std::to_string(i));
      }
      std::memcpy(lfts.mutable_row(sw), rows[i], max_lid + 1);
    }
    sar::VirtualLayers vl;
    for (size_t i = 0; i < num_layer_entries; ++i) {
      const sar_route_layer_t& e = layers[i];
      if (e.layer < 0 || e.layer > 15 || e.slid > 0xFFFF || e.dlid > 0xFFFF) {
        return sar::Status::InvalidArgument("sar_check_tables: layer entry " + std::to_string(i) +
                                            " out of range");
      }
      vl.set(static_cast<sar::Lid>(e.slid), static_cast<sar::Lid>(e.dlid), e.layer);
    }
    sar::ValidationReport report;
    return sar::ValidateRouting(f, lfts, vl.size() > 0 ? &vl : nullptr, vl.num_layers(),
                                sar::ValidationFor(options->options), &report);
  });
}

int sar_changed_ports(const sar_fabric_t* fabric, const sar_result_t* before,
                      const sar_result_t* after, uint64_t* port_guids, int max, char** errptr) {
  int count = -1;
  Guarded(errptr, [&] {
    if (fabric == nullptr || before == nullptr || after == nullptr || max < 0 ||
        (max > 0 && port_guids == nullptr)) {
      return sar::Status::InvalidArgument("sar_changed_ports: bad argument");
    }
    const sar::Fabric& f = fabric->fabric;
    SAR_RETURN_IF_ERROR(before->lfts.CheckFits(f));
    SAR_RETURN_IF_ERROR(after->lfts.CheckFits(f));
    const std::vector<sar::PortRef> ports =
        sar::ChangedRouteEndpoints(f, before->lfts, after->lfts);
    for (size_t i = 0; i < ports.size() && static_cast<int>(i) < max; ++i) {
      port_guids[i] = f.port_guid(ports[i]);
    }
    count = static_cast<int>(ports.size());
    return sar::Status::OK();
  });
  return count;
}

// --- The migration coordinator ----------------------------------------------------------------
// Each call is guarded: a bad_alloc inside the state machine becomes a lost event (logged by
// nobody), never an exception in OpenSM's thread.

sar_mig_t* sar_mig_create(const sar_mig_config_t* config, char** errptr) {
  sar_mig_t* result = nullptr;
  Guarded(errptr, [&] {
    if (config == nullptr || config->exclude_after < 1 || config->ack_timeout_ms == 0 ||
        config->repath_timeout_ms == 0 || config->push_timeout_ms == 0) {
      return sar::Status::InvalidArgument(
          "sar_mig_create: timeouts must be > 0 ms and exclude_after >= 1");
    }
    sar::MigrationConfig c;
    c.ack_timeout_ms = config->ack_timeout_ms;
    c.repath_timeout_ms = config->repath_timeout_ms;
    c.push_timeout_ms = config->push_timeout_ms;
    c.exclude_after = config->exclude_after;
    c.first_epoch = config->first_epoch;
    result = new sar_mig_t(c);
    return sar::Status::OK();
  });
  return result;
}

void sar_mig_destroy(sar_mig_t* mig) { delete mig; }

void sar_mig_request(sar_mig_t* m, uint64_t now_ms) {
  Guarded(nullptr, [&] {
    m->coordinator.Request(now_ms);
    return sar::Status::OK();
  });
}

void sar_mig_planned(sar_mig_t* m, uint64_t now_ms, uint32_t epoch, int ok, int changed,
                     const sar_mig_gid_t* participants, size_t n, const char* why) {
  Guarded(nullptr, [&] {
    std::vector<sar::PortGid> p;
    for (size_t i = 0; participants != nullptr && i < n; ++i) p.push_back(Gid(participants[i]));
    m->coordinator.Planned(now_ms, epoch, ok != 0, changed != 0, p, why ? why : "");
    return sar::Status::OK();
  });
}

int sar_mig_ack(sar_mig_t* m, uint64_t now_ms, sar_mig_gid_t issuer, const uint8_t* data) {
  int result = static_cast<int>(sar::AckResult::kMalformed);
  Guarded(nullptr, [&] {
    sar_mig_msg_t msg;
    if (data == nullptr || sar_mig_decode(data, &msg) != 0) {
      // Counted as ignored like any other stray ack: the coordinator sees kind 0.
      m->coordinator.Ack(now_ms, Gid(issuer), 0, 0, 0);
      return sar::Status::OK();
    }
    result =
        static_cast<int>(m->coordinator.Ack(now_ms, Gid(issuer), msg.kind, msg.phase, msg.epoch));
    return sar::Status::OK();
  });
  return result;
}

const char* sar_mig_ack_result_name(int r) {
  if (r < 0 || r > static_cast<int>(sar::AckResult::kMalformed)) return "?";
  return sar::AckResultName(static_cast<sar::AckResult>(r));
}

void sar_mig_routing_done(sar_mig_t* m, uint64_t now_ms, uint32_t installed_epoch) {
  Guarded(nullptr, [&] {
    m->coordinator.RoutingDone(now_ms, installed_epoch);
    return sar::Status::OK();
  });
}

void sar_mig_topology_changed(sar_mig_t* m, uint64_t now_ms) {
  Guarded(nullptr, [&] {
    m->coordinator.TopologyChanged(now_ms);
    return sar::Status::OK();
  });
}

void sar_mig_tick(sar_mig_t* m, uint64_t now_ms) {
  Guarded(nullptr, [&] {
    m->coordinator.Tick(now_ms);
    return sar::Status::OK();
  });
}

uint64_t sar_mig_ms_to_deadline(const sar_mig_t* m, uint64_t now_ms) {
  return m->coordinator.MsToDeadline(now_ms);
}
int sar_mig_holding(const sar_mig_t* m) { return m->coordinator.Holding() ? 1 : 0; }
int sar_mig_phase(const sar_mig_t* m) { return static_cast<int>(m->coordinator.phase()); }
uint32_t sar_mig_epoch(const sar_mig_t* m) { return m->coordinator.epoch(); }
void sar_mig_acks(const sar_mig_t* m, size_t* acked, size_t* expected) {
  *acked = *expected = 0;
  Guarded(nullptr, [&] {  // Status() allocates
    const sar::MigrationStatus s = m->coordinator.Status();
    *acked = s.acked;
    *expected = s.expected;
    return sar::Status::OK();
  });
}

int sar_mig_pop_action(sar_mig_t* m, sar_mig_action_t* out) {
  sar::MigAction a;
  if (!m->coordinator.PopAction(&a)) return 0;
  static_assert(sar::MigAction::kPlan + 1 == SAR_MIG_ACT_PLAN, "action numbering");
  out->kind = a.kind == sar::MigAction::kLog ? (a.error ? SAR_MIG_ACT_LOG_ERROR : SAR_MIG_ACT_LOG)
                                             : static_cast<int>(a.kind) + 1;
  out->epoch = a.epoch;
  out->flags = a.flags;
  out->deadline_ms = a.deadline_ms;
  const size_t n = std::min(a.text.size(), sizeof out->text - 1);
  std::memcpy(out->text, a.text.data(), n);
  out->text[n] = '\0';
  return 1;
}

int sar_mig_write_status(const sar_mig_t* m, uint64_t now_ms, const char* path, char** errptr) {
  return Guarded(errptr,
                 [&] {
                   if (path == nullptr || *path == '\0') {
                     return sar::Status::InvalidArgument("sar_mig_write_status: no path");
                   }
                   return sar::WriteFileAtomic(
                       path, sar::MigrationStatusJson(m->coordinator.Status(), now_ms) + "\n");
                 })
             ? 0
             : 1;
}

int sar_write_file_atomic(const char* path, const char* text, char** errptr) {
  return Guarded(errptr,
                 [&] {
                   if (path == nullptr || *path == '\0' || text == nullptr) {
                     return sar::Status::InvalidArgument("sar_write_file_atomic: no path or text");
                   }
                   sar::WriteOptions options;
                   options.mode = 0644;  // figures for a local scraper, never a copied mode
                   return sar::WriteFileAtomic(path, text, options);
                 })
             ? 0
             : 1;
}

void sar_mig_count_ignored(sar_mig_t* m, uint64_t n) { m->coordinator.CountIgnored(n); }

sar_mig_inbox_t* sar_mig_inbox_create(void) { return new (std::nothrow) sar_mig_inbox_t(); }

void sar_mig_inbox_destroy(sar_mig_inbox_t* inbox) { delete inbox; }

int sar_mig_inbox_offer(sar_mig_inbox_t* inbox, sar_mig_gid_t issuer, const uint8_t* data) {
  return inbox->inbox.Offer(Gid(issuer), data) ? 1 : 0;
}

void sar_mig_inbox_sync(sar_mig_inbox_t* inbox, const sar_mig_t* m) {
  Guarded(nullptr, [&] {  // a bad_alloc keeps the old participants
    inbox->inbox.Sync(m->coordinator);
    return sar::Status::OK();
  });
}

size_t sar_mig_inbox_take(sar_mig_inbox_t* inbox, sar_mig_gid_t* issuers, uint8_t* data,
                          size_t max) {
  size_t n = 0;
  sar::InboxAck a[64];  // in chunks: each Take shifts the acks left behind
  while (n < max) {
    const size_t got = inbox->inbox.Take(a, std::min(max - n, sizeof a / sizeof a[0]));
    if (got == 0) break;
    for (size_t i = 0; i < got; ++i, ++n) {
      issuers[n] = {a[i].issuer.prefix, a[i].issuer.guid};
      std::memcpy(data + n * SAR_MIG_DATA_SIZE, a[i].data, SAR_MIG_DATA_SIZE);
    }
  }
  return n;
}

uint64_t sar_mig_inbox_take_strays(sar_mig_inbox_t* inbox) { return inbox->inbox.TakeStrays(); }

void sar_free(void* ptr) { std::free(ptr); }

}  // extern "C"
