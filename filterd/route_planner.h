// The routing side of sar-filterd, for file mode and --dry-run: the fabric with its LIDs, the
// tables the subnet manager has now (the last good ones), and a routing engine from libsar.
// Plan() computes tables for a job set and hands them out only if they pass validation (fit
// the fabric, every route delivered, no loops); otherwise the last good tables stay.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "filter.h"
#include "sar/engine.h"
#include "sar/fabric.h"
#include "sar/lft.h"
#include "sar/metrics.h"
#include "sar/status.h"

namespace sar::filterd {

struct PlannerOptions {
  std::string engine = "sar";
  int num_vls = 8;
  int threads = 0;  // 0 = all hardware threads
};

/// max effective EFI and dark fiber: what a reroute is judged by (SAR paper Sec. 4.2).
struct RouteQuality {
  uint64_t max_effective_efi = 0;
  double dark_fiber = 0;
};

class RoutePlanner {
 public:
  /// `fabric` with LIDs set. `engine` may be a test's own; null = MakeRoutingEngine(name).
  RoutePlanner(Fabric fabric, std::unique_ptr<RoutingEngine> engine, PlannerOptions options);

  /// Reads the topology and guid2lid files, and the current tables if `lfts_path` is not empty.
  static Status Open(const std::string& topology_path, const std::string& guid2lid_path,
                     const std::string& lfts_path, const PlannerOptions& options,
                     std::unique_ptr<RoutePlanner>* out);

  /// Sets the tables the subnet manager has now. Fails if they do not fit the fabric.
  Status SetCurrent(LftSet tables);
  bool has_current() const { return has_current_; }
  const LftSet& current() const { return current_; }
  const Fabric& fabric() const { return fabric_; }

  /// Quality of the current tables for `jobs`. Fails without current tables.
  Status Evaluate(const std::vector<MultiSwitchJob>& jobs, RouteQuality* out) const;
  /// New tables for `jobs`, validated. On any error *out is unspecified and the current tables
  /// are unchanged (callers keep handing out those).
  Status Plan(const std::vector<MultiSwitchJob>& jobs, LftSet* out, RouteQuality* quality) const;

 private:
  Status Quality(const LftSet& tables, const std::vector<MultiSwitchJob>& jobs,
                 RouteQuality* out) const;

  Fabric fabric_;
  std::unique_ptr<RoutingEngine> engine_;
  PlannerOptions options_;
  LftSet current_;
  bool has_current_ = false;
};

}  // namespace sar::filterd
