// Migration mode as an engine wrapper, for the baseLID/highLID update protocol (SAR paper
// Sec. 3.3; RoutingOptions::migration): the engine routes the base LIDs on layers 0..n-2,
// Up*/Down* the highLIDs on layer n-1; validation.cc checks the layers by the same rule (below).
//
// The rule (RoutingOptions::migration):
// Migration mode, for the baseLID/highLID update protocol (SAR paper Sec. 3.3): every
// endpoint port has LMC 1. Its base LID is routed by `engine` on layers 0..n-2, its highLID
// (base + 1) by Up*/Down* on layer n-1, n = min(num_vls, max_layers) >= 2. The highLID
// entries thus depend on the fabric, its LIDs and root_names only: no job mapping changes
// them, so traffic moved to highLIDs keeps its paths while the base tables are replaced.
// Switch LIDs are routed by `engine`. A route's layer follows its destination (an LFT
// forwards by destination only): to a highLID, layer n-1; to a base LID, the engine's layer
// of (source base LID, destination). Packets never mix base and high, but a mixed pair still
// gets a layer whose dependencies the check has seen.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

#include "pass/stages.h"
#include "sar/env.h"

namespace sar::pass {
namespace {

std::string LidHex(Lid lid) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", lid);
  return buf;
}

// Migration mode needs LMC 1 on every endpoint: its base LID and its highLID.
Status CheckMigrationLids(const Fabric& f) {
  for (const PortRef& e : f.Endpoints()) {
    if (f.base_lid(e) != 0 && f.lmc(e) != 1) {
      return Status::InvalidArgument("migration mode needs LMC 1 on every HCA port: '" +
                                     f.name(e.node) + "' port " + std::to_string(e.port) +
                                     " has LMC " + std::to_string(f.lmc(e)));
    }
  }
  return Status::OK();
}

// The fabric with each HCA port's LIDs replaced: `high` false keeps the base LID alone (LMC 0),
// true gives the highLID (base + 1) alone. Switch LIDs stay. Node and switch order is kept, so
// tables of a view index like tables of `f`.
Status LidView(const Fabric& f, bool high, Fabric* out) {
  *out = f;
  out->ClearLids();
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    for (int p = 0; p <= f.num_ports(n); ++p) {
      const PortRef r{n, p};
      const Lid base = f.base_lid(r);
      if (base == 0) continue;
      if (f.is_switch(n)) {
        SAR_RETURN_IF_ERROR(out->SetLid(r, base, f.lmc(r)));
      } else {
        SAR_RETURN_IF_ERROR(out->SetLid(r, high && f.lmc(r) >= 1 ? base + 1 : base, 0));
      }
    }
  }
  return Status::OK();
}

// Migration mode's layer rule, written once: RouteMigration sets the layers by it and
// CheckMigrationLayers (validation) checks them by it. It covers every route between endpoints
// of different nodes from either LID of the source (base LID or highLID) to either LID of the
// destination. A route's layer follows its destination (an LFT forwards by destination only):
// to a highLID, the highLID layer `last`; to a base LID, the layer the engine gave the base route
// (source base LID -> destination base LID), which must be below `last`.
struct MigrationRoute {
  Lid src = 0, dst = 0;            // source LID -> destination LID
  Lid src_base = 0, dst_base = 0;  // the ends' base LIDs: the engine's route
  bool to_high = false;            // dst is the destination's highLID (dst_base + 1)
};

// The layer the rule gives `route`, `base_layer` being the engine's layer of its base route; -1
// when that layer is the highLID layer or above (MigrationLayerError says why).
int MigrationLayer(const MigrationRoute& route, int base_layer, int last) {
  if (route.to_high) return last;
  return base_layer < last ? base_layer : -1;
}

Status MigrationLayerError(const MigrationRoute& route, int layer, int last) {
  if (route.to_high) {
    return Status::Failed("invalid routing: migration mode: route lid " + LidHex(route.src) +
                          " -> highLID " + LidHex(route.dst) + " in layer " +
                          std::to_string(layer) + ", not the highLID layer " +
                          std::to_string(last));
  }
  return Status::Failed("invalid routing: migration mode: route lid " + LidHex(route.src) +
                        " -> base lid " + LidHex(route.dst) + " in layer " + std::to_string(layer) +
                        ", which only highLID routes may use");
}

// Calls visit(route) for every route the rule covers, stopping at the first error: per pair of
// endpoints (Fabric::Endpoints() order), from the source's base LID then its highLID, the route
// to the highLID then the one to the base LID.
template <class Visit>
Status ForEachMigrationRoute(const Fabric& f, Visit visit) {
  const std::vector<PortRef> ends = f.Endpoints();
  for (const PortRef& s : ends) {
    const Lid sb = f.base_lid(s);
    if (sb == 0) continue;
    for (const PortRef& d : ends) {
      const Lid db = f.base_lid(d);
      if (db == 0 || d.node == s.node) continue;
      for (Lid sl : {sb, sb + 1}) {
        SAR_RETURN_IF_ERROR(visit(MigrationRoute{sl, db + 1, sb, db, true}));
        SAR_RETURN_IF_ERROR(visit(MigrationRoute{sl, db, sb, db, false}));
      }
    }
  }
  return Status::OK();
}

}  // namespace

// The migration layer discipline (ValidationOptions::migration). Mixed pairs are checked too:
// their layer decides which dependencies they add.
Status CheckMigrationLayers(const Fabric& f, const VirtualLayers* layers, int last) {
  SAR_RETURN_IF_ERROR(CheckMigrationLids(f));
  if (layers == nullptr) {
    return Status::Failed("invalid routing: migration mode: the routes come without layers");
  }
  return ForEachMigrationRoute(f, [&](const MigrationRoute& route) {
    const int layer = layers->get(route.src, route.dst);
    if (MigrationLayer(route, layer, last) != layer) {
      return MigrationLayerError(route, layer, last);
    }
    return Status::OK();
  });
}

// Migration mode: `engine` on the base LIDs (layers 0..n-2), Up*/Down* on the highLIDs (layer
// n-1), one table set. The highLID part sees no jobs, so it is the same for every mapping.
Status RouteMigration(const RoutingInputs& inputs, const RoutingEngine& engine,
                      RoutingOutput* out) {
  const Fabric& f = *inputs.fabric;
  const int lanes = UsableLanes(inputs.options.num_vls, inputs.options.max_layers);
  if (lanes < 2) {
    return Status::InvalidArgument(
        "migration mode needs at least 2 virtual lanes (base layers and the highLID layer), " +
        std::to_string(lanes) + " usable");
  }
  SAR_RETURN_IF_ERROR(CheckMigrationLids(f));
  const Stopwatch t0;
  Fabric base_view, high_view;
  SAR_RETURN_IF_ERROR(LidView(f, false, &base_view));
  SAR_RETURN_IF_ERROR(LidView(f, true, &high_view));

  RoutingInput in = inputs.EngineInput();
  in.fabric = &base_view;
  in.num_vls = lanes - 1;
  RoutingOutput base;
  SAR_RETURN_IF_ERROR(engine.Route(in, &base));

  const std::unique_ptr<RoutingEngine> updn = MakeRoutingEngine("updn");
  RoutingInput hin;
  hin.fabric = &high_view;
  hin.num_vls = 1;
  hin.roots = inputs.roots;
  hin.threads = inputs.options.threads;
  hin.allow_disconnected = inputs.options.allow_disconnected;
  RoutingOutput high;
  const Status hs = updn->Route(hin, &high);
  if (!hs.ok()) {
    const std::string msg = "highLID routing (updn): " + hs.message();
    return hs.code() == Status::Code::kFailed ? Status::Failed(msg) : Status::InvalidArgument(msg);
  }

  RoutingOutput r;
  r.lfts = LftSet(f);
  const Lid base_top = std::min(base.lfts.max_lid(), f.max_lid());
  const std::vector<PortRef> ends = f.Endpoints();
  for (int sw = 0; sw < f.num_switches(); ++sw) {
    std::copy(base.lfts.row(sw), base.lfts.row(sw) + base_top + 1, r.lfts.mutable_row(sw));
    for (const PortRef& e : ends) {
      const Lid h = f.base_lid(e) + 1;
      if (f.base_lid(e) != 0) r.lfts.set_port(sw, h, high.lfts.port(sw, h));
    }
  }
  const int last = lanes - 1;
  SAR_RETURN_IF_ERROR(ForEachMigrationRoute(f, [&](const MigrationRoute& route) {
    const int engine_layer = base.layers.get(route.src_base, route.dst_base);
    const int layer = MigrationLayer(route, engine_layer, last);
    if (layer < 0) return MigrationLayerError(route, engine_layer, last);
    r.layers.set(route.src, route.dst, layer);
    return Status::OK();
  }));
  r.num_layers = lanes;
  r.layers_ms = base.layers_ms;
  r.paths_ms = t0.ElapsedMs() - base.layers_ms;
  r.notes = std::move(base.notes);
  r.notes.push_back("migration mode: base LIDs on layers 0.." + std::to_string(last - 1) +
                    ", highLIDs by updn on layer " + std::to_string(last));
  for (const std::string& n : high.notes) r.notes.push_back("highLIDs: " + n);
  *out = std::move(r);
  return Status::OK();
}

}  // namespace sar::pass
