// The inputs stage: fabric + options -> the engine to run and its inputs (job mapping with
// patterns, node classes, roots), with the facts worth logging as notes.
//
// The empty-mapping rule lives here: engine "sar" with no job (no mapping given, a missing
// optional mapping, or one that lists no jobs) routes as plain "dfsssp", noted. SAR without jobs
// is DFSSSP's balancing anyway; naming the engine used keeps logs and comparisons honest.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "pass/stages.h"
#include "sar/io/guid_file.h"
#include "sar/io/job_file.h"

namespace sar {
namespace {

Status LoadClasses(const Fabric& f, const RoutingOptions& o, RoutingInputs* in) {
  if (o.cn_guids_path.empty() && o.io_guids_path.empty()) return Status::OK();
  std::vector<Guid> cn, io;
  if (!o.cn_guids_path.empty()) SAR_RETURN_IF_ERROR(ReadGuidFile(o.cn_guids_path, &cn));
  if (!o.io_guids_path.empty()) SAR_RETURN_IF_ERROR(ReadGuidFile(o.io_guids_path, &io));
  std::vector<std::string> unknown;
  SAR_RETURN_IF_ERROR(MakeNodeClasses(f, o.cn_guids_path.empty() ? nullptr : &cn,
                                      o.io_guids_path.empty() ? nullptr : &io, &in->classes,
                                      &unknown));
  for (const std::string& g : unknown) {
    in->notes.push_back("GUID " + g + " of the class files is not an HCA of the fabric");
  }
  return Status::OK();
}

// Everything after the mapping is known; `missing` says the optional mapping file is absent.
Status Settle(const Fabric& f, const RoutingOptions& o, JobMapping mapping, bool missing,
              RoutingInputs* out) {
  RoutingInputs in;
  in.fabric = &f;
  in.options = o;
  in.mapping = std::move(mapping);
  if (MakeRoutingEngine(o.engine) == nullptr) {
    return Status::InvalidArgument("unknown engine '" + o.engine +
                                   "'; known engines: " + RoutingEngineList());
  }
  for (const std::string& name : o.root_names) {
    const NodeId n = f.FindByName(name);
    if (n == kNoNode || !f.is_switch(n)) {
      return Status::InvalidArgument("root '" + name + "' is not a switch of the fabric");
    }
    in.roots.push_back(n);
  }
  const std::string mapping_name = o.mapping_path.empty() ? "(none given)" : o.mapping_path;
  std::vector<std::string> unknown_hosts;
  in.jobs = ResolveJobs(f, in.mapping, &unknown_hosts, o.job_hca_pairs);
  for (const std::string& h : unknown_hosts) {
    in.notes.push_back("host '" + h + "' of job mapping " + mapping_name + " is not in the fabric");
  }
  in.engine = o.engine;
  if (in.engine == "sar" && in.mapping.jobs.empty()) {
    in.engine = "dfsssp";
    in.notes.push_back("job mapping " + mapping_name +
                       (missing                  ? " does not exist"
                        : o.mapping_path.empty() ? ""
                                                 : " lists no jobs") +
                       ": routing with plain dfsssp");
  }
  SAR_RETURN_IF_ERROR(LoadClasses(f, o, &in));
  *out = std::move(in);
  return Status::OK();
}

}  // namespace

RoutingInput RoutingInputs::EngineInput() const {
  RoutingInput in;
  in.fabric = fabric;
  // The engine gets the lanes the tables' consumer can carry: a layered engine then needs (and
  // fails when it needs more than) that many, instead of spreading routes over lanes the
  // consumer drops (OpenSM's file engine loads no SL at all).
  in.num_vls = pass::UsableLanes(options.num_vls, options.max_layers);
  in.jobs = jobs.empty() ? nullptr : &jobs;
  in.classes = classes.of_node.empty() ? nullptr : &classes;
  in.roots = roots;
  in.threads = options.threads;
  in.allow_disconnected = options.allow_disconnected;
  // One lane (OpenSM's file engine, sar-filterd's file mode): no lane of their own for the
  // switch-LID routes, so the engines layer HCA pairs only (the one-lane rule, validation.cc).
  in.switch_lids = options.switch_lids && in.num_vls > 1 && !options.migration;
  pass::SetDeltaInputs(*this, &in);
  in.sar_refine = options.sar_refine;
  in.sar_all_pairs_budget = options.sar_all_pairs_budget;
  in.sar_refine_work = options.sar_refine_work;
  in.sar_no_regret = options.sar_no_regret;
  return in;
}

Status LoadRoutingInputs(const Fabric& fabric, const RoutingOptions& options, RoutingInputs* out) {
  JobMapping mapping;
  bool missing = false;
  if (!options.mapping_path.empty()) {
    struct stat st;
    if (options.mapping_optional && ::stat(options.mapping_path.c_str(), &st) != 0 &&
        errno == ENOENT) {
      missing = true;
    } else {
      SAR_RETURN_IF_ERROR(ReadJobMapping(options.mapping_path, &mapping));
    }
  }
  return Settle(fabric, options, std::move(mapping), missing, out);
}

Status LoadRoutingInputs(const Fabric& fabric, const RoutingOptions& options, JobMapping mapping,
                         RoutingInputs* out) {
  return Settle(fabric, options, std::move(mapping), false, out);
}

}  // namespace sar
