#include "sar/engines/engine.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine_checks.h"
#include "engines/engines.h"
#include "engines/switch_graph.h"
#include "sar/env.h"

namespace sar {
namespace {

std::string PortName(const Fabric& f, PortRef p) {
  return "'" + f.name(p.node) + "' port " + std::to_string(p.port);
}

// Job endpoints must be cabled HCA ports of this fabric (anything else would index the engines'
// arrays out of range or route a LID nobody owns), host_of/rail_of must be empty or one per
// endpoint, and num_leaf_switches must be JobLeafSpan (sar/model/jobs.h): SAR skips jobs below two,
// so a wrong count silently drops or adds a job.
Status CheckJobs(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  for (const ResolvedJob& job : jobs) {
    for (const PortRef& p : job.endpoints) {
      const bool known = p.node >= 0 && p.node < f.num_nodes();
      const bool hca_port =
          known && !f.is_switch(p.node) && p.port >= 1 && p.port <= f.num_ports(p.node);
      if (!hca_port || !f.peer(p).valid()) {
        const std::string where =
            known ? PortName(f, p)
                  : "(node " + std::to_string(p.node) + ", port " + std::to_string(p.port) + ")";
        return Status::InvalidArgument("job '" + job.id + "': endpoint " + where +
                                       " is not a cabled HCA port of the fabric");
      }
    }
    const size_t n = job.endpoints.size();
    if ((!job.host_of.empty() || !job.rail_of.empty()) &&
        (job.host_of.size() != n || job.rail_of.size() != n)) {
      return Status::InvalidArgument("job '" + job.id + "': " + std::to_string(n) + " endpoints, " +
                                     std::to_string(job.host_of.size()) + " hosts and " +
                                     std::to_string(job.rail_of.size()) + " rails given");
    }
    const int span = JobLeafSpan(f, job);
    if (span != job.num_leaf_switches) {
      return Status::InvalidArgument("job '" + job.id + "' says it spans " +
                                     std::to_string(job.num_leaf_switches) +
                                     " leaf switches, its traffic spans " + std::to_string(span));
    }
  }
  return Status::OK();
}

// Everything about RoutingInput that does not depend on the engine (see Route in engine.h).
Status CheckInput(const RoutingInput& in) {
  if (in.fabric == nullptr) return Status::InvalidArgument("no fabric given");
  const Fabric& f = *in.fabric;
  if (f.num_switches() == 0) return Status::InvalidArgument("the fabric has no switches");
  if (in.num_vls < 1 || in.num_vls > 15) {
    return Status::InvalidArgument("num_vls must be 1..15, got " + std::to_string(in.num_vls));
  }
  if (in.threads < 0) {
    return Status::InvalidArgument("threads must be >= 0 (0 = all hardware threads), got " +
                                   std::to_string(in.threads));
  }
  SAR_RETURN_IF_ERROR(f.CheckEndpointLids());
  for (NodeId r : in.roots) {
    if (r < 0 || r >= f.num_nodes()) {
      return Status::InvalidArgument("root " + std::to_string(r) + " is not a node of the fabric");
    }
    if (!f.is_switch(r)) return Status::InvalidArgument("root '" + f.name(r) + "' is not a switch");
  }
  if (in.classes != nullptr && !in.classes->of_node.empty() &&
      in.classes->of_node.size() != static_cast<size_t>(f.num_nodes())) {
    return Status::InvalidArgument("node classes are for " +
                                   std::to_string(in.classes->of_node.size()) +
                                   " nodes, the fabric has " + std::to_string(f.num_nodes()));
  }
  if (in.jobs != nullptr) SAR_RETURN_IF_ERROR(CheckJobs(f, *in.jobs));
  return Status::OK();
}

// Plain cable connectivity between endpoints; engines with routing rules check their own
// restrictions on top (updn). Linear unless the fabric really is in pieces.
Status CheckConnected(const RoutingInput& in, std::vector<std::string>* notes) {
  const internal::SwitchGraph g = internal::BuildSwitchGraph(*in.fabric);
  std::vector<int> component;
  if (internal::SwitchComponents(g, &component) <= 1) return Status::OK();
  return internal::CheckEndpointReach(
      *in.fabric, g, [&](int s, int t) { return component[s] == component[t]; },
      in.allow_disconnected, "no cable path", notes);
}

// What every caller indexes by without checking: one table per switch, every LID, at least one
// layer. A miss is an engine bug; better a Failed than an out-of-range read. Whether the layers
// fit the lanes is a validity rule of the routing pass (ValidateRouting), not checked here.
Status CheckOutput(std::string_view engine, const RoutingInput& in, const RoutingOutput& out) {
  const Fabric& f = *in.fabric;
  const std::string who = "engine '" + std::string(engine) + "' ";
  if (out.lfts.num_switches() != f.num_switches() || out.lfts.max_lid() != f.max_lid()) {
    return Status::Failed(who + "returned tables for " + std::to_string(out.lfts.num_switches()) +
                          " switches and LIDs up to " + std::to_string(out.lfts.max_lid()) +
                          ", the fabric has " + std::to_string(f.num_switches()) + " and " +
                          std::to_string(f.max_lid()));
  }
  if (out.num_layers < 1) {
    return Status::Failed(who + "reported " + std::to_string(out.num_layers) + " virtual layers");
  }
  return Status::OK();
}

}  // namespace

namespace internal {
Status CheckRoutingArguments(const RoutingInput& in) { return CheckInput(in); }

Status CheckRoutingInput(const RoutingInput& in, std::vector<std::string>* notes) {
  SAR_RETURN_IF_ERROR(CheckInput(in));
  return CheckConnected(in, notes);
}
}  // namespace internal

Status RoutingEngine::Route(const RoutingInput& in, RoutingOutput* out) const {
  const Stopwatch start;
  if (out == nullptr) return Status::InvalidArgument("no output given");
  SAR_RETURN_IF_ERROR(CheckInput(in));
  RoutingOutput result;
  SAR_RETURN_IF_ERROR(CheckConnected(in, &result.notes));
  SAR_RETURN_IF_ERROR(DoRoute(in, &result));
  SAR_RETURN_IF_ERROR(CheckOutput(name(), in, result));
  result.paths_ms = std::max(0.0, start.ElapsedMs() - result.layers_ms);
  *out = std::move(result);
  return Status::OK();
}

// The engine registry (declared in sar/engines/engine.h): one line per engine. The engines
// themselves are in their own files (engines/engines.h lists their factories).
namespace {

struct EngineEntry {
  const char* name;
  std::unique_ptr<RoutingEngine> (*make)();
};

// One line per engine; the order is the order RoutingEngineNames() lists.
// clang-format off
const EngineEntry kEngines[] = {
    {"minhop", internal::NewMinHopEngine},
    {"updn", internal::NewUpDownEngine},
    {"dfsssp", internal::NewDfssspEngine},
    {"sar", internal::NewSarEngine},
    {"dmodk", internal::NewDmodkEngine},
    {"dmodc", internal::NewDmodcEngine},
    {"sar-dmodc", internal::NewSarDmodcEngine},
    {"osrm2", internal::NewOsrm2Engine},
    {"osrm3", internal::NewOsrm3Engine},
};
// clang-format on

}  // namespace

std::unique_ptr<RoutingEngine> MakeRoutingEngine(std::string_view name) {
  for (const EngineEntry& e : kEngines) {
    if (name == e.name) return e.make();
  }
  return nullptr;
}

std::vector<std::string> RoutingEngineNames() {
  std::vector<std::string> names;
  for (const EngineEntry& e : kEngines) names.emplace_back(e.name);
  return names;
}

std::string RoutingEngineList() {
  std::string list;
  for (const EngineEntry& e : kEngines) list += (list.empty() ? "" : ", ") + std::string(e.name);
  return list;
}

}  // namespace sar
