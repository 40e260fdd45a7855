// Scheduling-aware Dmodc: Dmodc's closed form, but a destination that belongs to a job spanning
// two or more leaf switches is indexed by its position inside that job (the job's HCA ports
// numbered leaf by leaf, leaves by GUID, ports by number on each leaf; counted from the
// machine-wide index of the job's first port) instead of its position in the whole machine. Dmodk
// spreads consecutive indices over consecutive up ports, so one job's destinations now spread over
// the up ports the way Dmodk spreads a whole machine, and traffic inside a job collides less than
// it would with the machine-wide indices, whose job members may share residues. Everything else
// (costs, dividers, Eq. 1, the validity pass, deadlock freedom) is Dmodc's. A port in several jobs
// takes the index of the largest (the first listed among equals); ports in no such job keep their
// machine-wide index.
#include <algorithm>
#include <numeric>
#include <string>

#include "engines/dmodc_core.h"
#include "engines/engines.h"
#include "sar/engines/engine.h"

namespace sar::internal {
namespace {

class SarDmodcEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "sar-dmodc"; }
  bool uses_jobs() const override { return true; }  // job members take their in-job index

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    const Fabric& f = *in.fabric;
    const SwitchGraph g = BuildSwitchGraph(f);
    DmodcPlan plan;
    SAR_RETURN_IF_ERROR(BuildDmodcPlan(g, in.threads, &plan));
    SAR_RETURN_IF_ERROR(CheckDmodcValidity(f, g, plan, in.allow_disconnected, &out->notes));
    const std::vector<uint32_t> machine = DmodcNodeIndex(g, plan);
    std::vector<uint32_t> index = machine;

    std::vector<int> dest_of_port(f.num_port_slots(), -1);
    for (int i = 0; i < g.num_endpoint_dests; ++i) {
      dest_of_port[f.port_id(g.dests[i].node, g.dests[i].port)] = i;
    }
    std::vector<int> jobs;  // multi-switch jobs, largest first
    const std::vector<ResolvedJob> none;
    const std::vector<ResolvedJob>& all = in.jobs != nullptr ? *in.jobs : none;
    for (int j = 0; j < static_cast<int>(all.size()); ++j) {
      if (all[j].num_leaf_switches >= 2) jobs.push_back(j);
    }
    std::stable_sort(jobs.begin(), jobs.end(), [&](int a, int b) {
      return all[a].endpoints.size() > all[b].endpoints.size();
    });
    std::vector<uint8_t> taken(g.num_endpoint_dests, 0);
    std::vector<int> members;
    size_t indexed = 0;
    for (int j : jobs) {
      members.clear();
      for (const PortRef& e : all[j].endpoints) {
        const int d = dest_of_port[f.port_id(e)];  // Route checked: a cabled HCA port
        if (d >= 0 && !taken[d]) {
          taken[d] = 1;
          members.push_back(d);
        }
      }
      // Machine-wide order is leaf by leaf, ports ascending: the job's order is its restriction.
      std::sort(members.begin(), members.end(),
                [&](int a, int b) { return machine[a] < machine[b]; });
      // Numbered from the machine-wide index of the job's first port, not from 0: the spread
      // inside the job is the same (consecutive indices), but jobs do not all start on the same
      // up port and divider block (numbering every job from 0 piled small jobs onto the first
      // spines: docs/benchmarks.md).
      const uint32_t base = members.empty() ? 0 : machine[members[0]];
      for (size_t k = 0; k < members.size(); ++k) {
        index[members[k]] = base + static_cast<uint32_t>(k);
      }
      indexed += members.size();
    }
    out->lfts = LftSet(f);
    FillDmodcTables(g, plan, index, plan.divider, in.threads, &out->lfts);
    out->notes.push_back("sar-dmodc: " + std::to_string(jobs.size()) + " multi-switch job(s), " +
                         std::to_string(indexed) + " HCA ports indexed inside their job");
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewSarDmodcEngine() { return std::make_unique<SarDmodcEngine>(); }

}  // namespace sar::internal
