// Fluid-model comparison for one alltoall job (docs/fors.md, "Per-job FORS"): the job's
// all-to-all completion time with its FORS plan on the pass's tables, against a phase-synchronised
// linear shift over the same ranks on tables of engine "sar" (the job as an ordinary SAR job) and
// engine "minhop" (OpenSM's minhop balancing, our implementation). Every transfer is one unit; a
// phase lasts as long as its most loaded directed link (HCA links included), found by walking the
// tables; the next phase starts when it ends. Printed: phases, model time, and throughput relative
// to n-1 conflict-free phases.
// Run: build/bench/fors_job_model [M0 M1 hosts]   (default FT(2;20,18), 120 hosts = 6 leaves)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sar/analysis/trace.h"
#include "sar/engines/engine.h"
#include "sar/fors/fors.h"
#include "sar/fors/fors_job.h"
#include "sar/fors/fors_tables.h"
#include "sar/pass/routing_pass.h"

namespace {

// Sum over phases of the most loaded channel, by walking the tables.
int64_t ModelTime(const sar::Fabric& f, const sar::LftSet& lfts,
                  const std::vector<sar::PortRef>& hosts,
                  const std::vector<std::vector<sar::ForsJobTransfer>>& phases) {
  const sar::RouteTracer tracer(f, lfts);
  std::vector<int> load(f.num_port_slots(), 0);
  int64_t total = 0;
  for (const auto& phase : phases) {
    std::fill(load.begin(), load.end(), 0);
    int worst = 0;
    for (const sar::ForsJobTransfer& t : phase) {
      sar::RouteFate fate;
      for (sar::PortId c : tracer.Path(hosts[t.src], f.base_lid(hosts[t.dst]), &fate)) {
        worst = std::max(worst, ++load[c]);
      }
    }
    total += worst;
  }
  return total;
}

std::vector<std::vector<sar::ForsJobTransfer>> LinearShift(int n) {
  std::vector<std::vector<sar::ForsJobTransfer>> phases;
  for (int p = 1; p < n; ++p) {
    phases.emplace_back();
    for (int i = 0; i < n; ++i) phases.back().push_back({i, (i + p) % n});
  }
  return phases;
}

}  // namespace

int main(int argc, char** argv) {
  const int m0 = argc > 1 ? std::atoi(argv[1]) : 20, m1 = argc > 2 ? std::atoi(argv[2]) : 18;
  const int n = argc > 3 ? std::atoi(argv[3]) : 6 * m0;
  const std::vector<std::pair<std::string, std::vector<sar::FailedLink>>> scenarios = {
      {"intact", {}},
      {"1 failed link", {{0, 0}}},
      {"2 failed links", {{0, 0}, {1, 1}}},
      {"3 failed links", {{0, 0}, {1, 1}, {2, 2}}},
  };
  std::printf("FT(2;%d,%d), one alltoall job on hosts 0..%d (leaves 0..%d), fluid model\n", m0, m1,
              n - 1, (n - 1) / m0);
  std::printf("%-16s %12s %12s %12s %8s %8s\n", "scenario", "FORS", "SAR", "minhop", "phases",
              "bound");
  for (const auto& [name, failed] : scenarios) {
    sar::Fabric f;
    if (!sar::BuildForsFabric(m0, m1, failed, &f).ok()) return 1;
    sar::JobMapping mapping;
    sar::Job job;
    job.id = "a2a";
    for (int s = 0; s < n; ++s) {
      char host[16];
      std::snprintf(host, sizeof host, "h%05d", s);
      job.hosts.push_back(host);
    }
    double rel[3] = {0, 0, 0};
    int64_t phases = 0, bound = 0;
    for (int k = 0; k < 3; ++k) {
      job.pattern = k == 0 ? sar::JobPattern::kAllToAll : sar::JobPattern::kDefault;
      mapping.jobs = {job};
      sar::RoutingRequest request;
      request.fabric = &f;
      request.options.engine = k == 2 ? "minhop" : "sar";
      request.options.threads = 2;
      request.mapping = mapping;
      sar::RoutingResult result;
      const sar::Status s = sar::RunRoutingPass(request, &result);
      const sar::RoutingOutput& out = result.output;
      const std::vector<sar::ForsJobPlan>& plans = result.fors;
      if (!s.ok()) {
        std::fprintf(stderr, "%s: %s\n", name.c_str(), s.ToString().c_str());
        return 1;
      }
      int64_t t = 0;
      if (k == 0) {
        if (plans.size() != 1) return 1;
        t = ModelTime(f, out.lfts, plans[0].hosts, plans[0].phases);
        phases = plans[0].stats.phases;
        bound = plans[0].stats.lower_bound;
      } else {
        // The same rank order as FORS (mapping order = leaf order here).
        std::vector<sar::PortRef> hosts;
        for (const std::string& h : job.hosts) hosts.push_back({f.FindByName(h), 1});
        t = ModelTime(f, out.lfts, hosts, LinearShift(n));
      }
      rel[k] = static_cast<double>(n - 1) / static_cast<double>(t);
    }
    std::printf("%-16s %12.3f %12.3f %12.3f %8lld %8lld\n", name.c_str(), rel[0], rel[1], rel[2],
                static_cast<long long>(phases), static_cast<long long>(bound));
  }
  std::printf(
      "(throughput relative to n-1 conflict-free phases; SAR and minhop run the linear "
      "shift)\n");
  return 0;
}
