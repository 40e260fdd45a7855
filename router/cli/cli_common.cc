#include "cli_common.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "sar/io/guid2lid.h"
#include "sar/io/job_file.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/model/fabric_order.h"
#include "sar/model/lids.h"

namespace sarcli {

int ExitCodeFor(const sar::Status& s) {
  switch (s.code()) {
    case sar::Status::Code::kOk:
      return kOk;
    case sar::Status::Code::kCorruption:
      return kBadInput;
    case sar::Status::Code::kIOError:
    case sar::Status::Code::kNotFound:
      return kIoError;
    case sar::Status::Code::kInvalidArgument:
      return kUsage;
    case sar::Status::Code::kFailed:
      return kCheckFailed;
  }
  return kIoError;
}

int Fail(const sar::Status& s) {
  std::fprintf(stderr, "sar-route: %s\n", s.ToString().c_str());
  return ExitCodeFor(s);
}

// --- Loading a fabric with LIDs -------------------------------------------------------------

void AddFabricOptions(CLI::App* cmd, FabricArgs* args, bool topology_required,
                      bool canonical_default) {
  cmd->add_option("--topology,-t", args->topology, "topology file (ibnetdiscover or ibsim form)")
      ->required(topology_required);
  cmd->add_option("--lids", args->lids,
                  "OpenSM guid2lid file with the fabric's LIDs (default: the LIDs in the "
                  "topology file, else the deterministic assignment)");
  cmd->add_option("--lmc", args->lmc, "LMC for the deterministic LID assignment")
      ->check(CLI::Range(0, 7));
  args->canonical_order = canonical_default;
  if (canonical_default) {
    cmd->add_flag("--canonical-order", args->canonical_order,
                  "put nodes in the OpenSM plugin's order (switches, then HCAs, each by GUID) "
                  "before routing (the default here)");
    cmd->add_flag("--file-order{false}", args->canonical_order,
                  "keep the topology file's node order instead of the OpenSM plugin's canonical "
                  "one (engines break ties by node order, so tables can differ from the plugin's)");
  } else {
    cmd->add_flag("--canonical-order", args->canonical_order,
                  "put nodes in the OpenSM plugin's order (switches, then HCAs, each by GUID) "
                  "before routing, so tables can be compared with libosmsar's entry for entry");
  }
}

sar::RoutingOptions RoutingOptionsFrom(const RoutingArgs& a, const std::string& engine) {
  sar::RoutingOptions ro;
  ro.engine = engine;
  ro.mapping_path = a.jobs;
  ro.cn_guids_path = a.cn_guids;
  ro.io_guids_path = a.io_guids;
  ro.root_names = a.roots;
  ro.num_vls = a.vls;
  ro.threads = a.threads;
  ro.allow_disconnected = a.allow_disconnected;
  ro.migration = a.migration;
  ro.switch_lids = !a.hca_pairs_only;
  ro.sar_refine = a.sar.refine;
  ro.sar_all_pairs_budget = a.sar.all_pairs_budget;
  ro.sar_refine_work = a.sar.refine_work;
  ro.sar_no_regret = a.sar.no_regret;
  ro.fors_only_where_faster = a.sar.fors_only_where_faster;
  ro.job_hca_pairs = a.hca_pairs;
  return ro;
}

void AddSarOptions(CLI::App* cmd, SarKnobs* knobs) {
  cmd->add_flag("--no-sar-refine{false}", knobs->refine,
                "sar: skip the local search that moves job routes off the most loaded channels "
                "(the plain SSSP result)");
  cmd->add_option("--sar-all-pairs-budget", knobs->all_pairs_budget,
                  "sar: the refinement keeps every channel's all-pairs load within this factor "
                  "of the all-pairs lower bound (0 = no cap)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--sar-refine-work", knobs->refine_work,
                  "sar: the refinement's work limit in search steps (default 2^28 = " +
                      std::to_string(sar::kDefaultSarRefineWork) +
                      "); fewer route faster and lower the all-pairs maximum less. The plugin's "
                      "sar_refine_work: equal values give equal tables")
      ->check(CLI::Range(uint64_t{1}, sar::kMaxSarRefineWork));
  cmd->add_flag("--no-sar-no-regret{false}", knobs->no_regret,
                "sar: skip the no-regret stage (on by default: a multi-switch job whose slowest "
                "flow would be slower than under dfsssp keeps dfsssp's routes on the switches "
                "they cross; may raise max effective EFI; docs/dfsssp-sar.md)");
  cmd->add_flag("--sar-no-regret", knobs->no_regret,
                "sar: the no-regret stage (the default; kept for old command lines)");
  cmd->add_flag("--fors-only-where-faster", knobs->fors_only_where_faster,
                "alltoall jobs keep FORS only where its phases are not slower for the job than "
                "SAR's routes all at once (the per-job flow model; docs/fors.md)");
}

sar::Status LoadFabric(const FabricArgs& args, sar::Fabric* fabric) {
  std::vector<std::string> warnings;
  SAR_RETURN_IF_ERROR(sar::ReadTopology(args.topology, fabric, &warnings));
  for (const std::string& w : warnings) std::fprintf(stderr, "sar-route: warning: %s\n", w.c_str());
  if (!args.lids.empty()) {
    std::vector<sar::Guid2LidEntry> entries;
    SAR_RETURN_IF_ERROR(sar::ReadGuid2Lid(args.lids, &entries));
    fabric->ClearLids();
    int skipped = 0;
    sar::Status s = sar::ApplyGuid2Lid(entries, fabric, &skipped);
    if (!s.ok()) return sar::Status::Corruption(args.lids + ": " + s.message());
    if (skipped > 0) {
      std::fprintf(stderr, "sar-route: note: %d GUIDs of %s are not in %s\n", skipped,
                   args.lids.c_str(), args.topology.c_str());
    }
  } else if (fabric->max_lid() == 0) {
    sar::LidOptions opts;
    opts.lmc = args.lmc;
    SAR_RETURN_IF_ERROR(sar::AssignLids(opts, fabric));
  }
  // Every endpoint needs a LID to be routed to; say which one lacks it rather than guess.
  for (const sar::PortRef& e : fabric->Endpoints()) {
    if (fabric->base_lid(e) == 0) {
      if (args.lids.empty()) {
        return sar::Status::Corruption(args.topology + ": HCA '" + fabric->name(e.node) +
                                       "' port " + std::to_string(e.port) +
                                       " has no LID (give --lids)");
      }
      // The usual cause: the guid2lid comes from another view of the fabric (ibsim makes HCA
      // port GUIDs node GUID + port; real ConnectX ports often equal the node GUID).
      return sar::Status::Corruption(
          args.lids + ": no LID for HCA '" + fabric->name(e.node) + "' port " +
          std::to_string(e.port) + " (port GUID " + sar::GuidString(fabric->port_guid(e)) + " of " +
          args.topology + " is not in it; node GUID " + sar::GuidString(fabric->node_guid(e.node)) +
          "; is the guid2lid from another view of the fabric, e.g. ibsim's node GUID + port?)");
    }
  }
  // After the LIDs are settled, so the deterministic assignment does not depend on the flag.
  if (args.canonical_order) {
    sar::Fabric ordered;
    SAR_RETURN_IF_ERROR(sar::CanonicalNodeOrder(*fabric, &ordered));
    *fabric = std::move(ordered);
  }
  return sar::Status::OK();
}

sar::Status LoadFabricAndLfts(const FabricArgs& args, const std::vector<std::string>& lft_paths,
                              sar::Fabric* fabric, std::vector<sar::LftSet>* lfts) {
  SAR_RETURN_IF_ERROR(LoadFabric(args, fabric));
  lfts->resize(lft_paths.size());
  for (size_t i = 0; i < lft_paths.size(); ++i) {
    SAR_RETURN_IF_ERROR(sar::ReadLftDump(lft_paths[i], *fabric, &(*lfts)[i]));
  }
  return sar::Status::OK();
}

std::string Describe(const sar::Fabric& f, sar::NodeId n) {
  return f.description(n).empty() ? f.name(n) : f.description(n);
}

void AddJobHcaPairsOption(CLI::App* cmd, sar::JobHcaPairs* pairs) {
  cmd->add_option_function<std::string>(
         "--job-hca-pairs",
         [pairs](const std::string& v) {
           if (!sar::ParseJobHcaPairs(v, pairs)) {
             throw CLI::ValidationError("--job-hca-pairs",
                                        "expected rails or all, got '" + v + "'");
           }
         },
         "which HCA ports of a job's hosts exchange traffic: rails (default: HCA i of a host to "
         "HCA i of the others) or all (every HCA of a host to every HCA of the others); "
         "docs/formats.md")
      ->type_name("rails|all");
}

sar::Status LoadJobs(const sar::Fabric& fabric, const std::string& path,
                     std::vector<sar::ResolvedJob>* jobs, sar::JobHcaPairs pairs) {
  jobs->clear();
  if (path.empty()) return sar::Status::OK();
  sar::JobMapping mapping;
  SAR_RETURN_IF_ERROR(sar::ReadJobMapping(path, &mapping));
  std::vector<std::string> unknown;
  *jobs = sar::ResolveJobs(fabric, mapping, &unknown, pairs);
  for (const std::string& h : unknown) {
    std::fprintf(stderr, "sar-route: note: host '%s' of %s is not in the fabric\n", h.c_str(),
                 path.c_str());
  }
  return sar::Status::OK();
}

void StepLog::Step(const std::string& what) const {
  if (!on_) return;
  const double s = start_.ElapsedSeconds();
  std::fprintf(stderr, "sar-route %s: [%8.1f s] %s\n", command_, s, what.c_str());
  std::fflush(stderr);
}

void AddProgressOption(CLI::App* cmd, std::string* mode) {
  cmd->add_option("--progress", *mode,
                  "a line per step on stderr with the time so far: auto (on a terminal, not with "
                  "--json), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
}

bool StepsWanted(const std::string& mode, bool json_output) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return !json_output && isatty(STDERR_FILENO);
}

}  // namespace sarcli
