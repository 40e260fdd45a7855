// osmsar_config: the plugin's key/value file (see osmsar_config.h).
#include "osmsar_config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "sar/engines/engine.h"
#include "sar/io/file_util.h"
#include "sar/io/line_reader.h"
#include "sar/model/jobs.h"
#include "sar/status.h"

namespace {

bool CopyString(std::string_view value, char* dst, size_t dst_size) {
  if (value.size() + 1 > dst_size) return false;
  std::memcpy(dst, value.data(), value.size());
  dst[value.size()] = '\0';
  return true;
}

// One "key value" line; `where` is "path:line".
sar::Status SetKey(const std::string& key, const std::string& value, const std::string& where,
                   OsmsarConfig* c) {
  auto bad = [&](const std::string& what) {
    return sar::Status::Corruption(where + ": " + key + " " + what + ", not '" + value + "'");
  };
  auto int_value = [&](int lo, int hi, int* out) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
      return bad("must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    *out = static_cast<int>(v);
    return sar::Status::OK();
  };
  auto path_value = [&](char* dst) {
    if (!CopyString(value, dst, OSMSAR_PATH_MAX)) {
      return sar::Status::Corruption(where + ": " + key + " path too long");
    }
    return sar::Status::OK();
  };
  if (key == "engine") {
    // Any engine of libsar's registry (the routing pass runs it the same way for each).
    if (sar::MakeRoutingEngine(value) == nullptr) {
      return bad("must be one of " + sar::RoutingEngineList());
    }
    CopyString(value, c->engine, sizeof c->engine);
    return sar::Status::OK();
  }
  if (key == "mapping_file") return path_value(c->mapping_file);
  if (key == "cn_guid_file") return path_value(c->cn_guid_file);
  if (key == "io_guid_file") return path_value(c->io_guid_file);
  if (key == "num_vls") return int_value(1, 15, &c->num_vls);
  if (key == "threads") return int_value(0, 1024, &c->threads);
  auto bool_value = [&](int* out) {
    if (value == "true" || value == "TRUE" || value == "1" || value == "on") {
      *out = 1;
    } else if (value == "false" || value == "FALSE" || value == "0" || value == "off") {
      *out = 0;
    } else {
      return bad("must be true or false");
    }
    return sar::Status::OK();
  };
  if (key == "allow_disconnected") return bool_value(&c->allow_disconnected);
  if (key == "migration") return bool_value(&c->migration);
  if (key == "delta") return bool_value(&c->delta);
  if (key == "sar_refine") return bool_value(&c->sar_refine);
  if (key == "sar_no_regret") return bool_value(&c->sar_no_regret);
  if (key == "fors_only_where_faster") return bool_value(&c->fors_only_where_faster);
  if (key == "job_hca_pairs") {
    sar::JobHcaPairs pairs;
    if (!sar::ParseJobHcaPairs(value, &pairs)) return bad("must be rails or all");
    c->job_hca_pairs_all = pairs == sar::JobHcaPairs::kAll;
    return sar::Status::OK();
  }
  if (key == "sar_all_pairs_budget") {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || errno != 0 || !(v >= 0) ||
        v > sar::kMaxSarAllPairsBudget) {
      return bad("must be a number in 0.." +
                 std::to_string(static_cast<int>(sar::kMaxSarAllPairsBudget)) + " (0 = no cap)");
    }
    c->sar_all_pairs_budget = v;
    return sar::Status::OK();
  }
  if (key == "sar_refine_work") {
    // Digits only: strtoull would take "-1" as 2^64 - 1.
    const bool digits = !value.empty() && value.size() <= 20 &&
                        value.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    const unsigned long long v = digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
    if (!digits || errno != 0 || v < 1 || v > sar::kMaxSarRefineWork) {
      return bad("must be an integer in 1.." + std::to_string(sar::kMaxSarRefineWork) +
                 " (search steps; the default is " + std::to_string(sar::kDefaultSarRefineWork) +
                 ")");
    }
    c->sar_refine_work = v;
    return sar::Status::OK();
  }
  if (key == "ack_timeout_ms") return int_value(1, 600000, &c->ack_timeout_ms);
  if (key == "repath_timeout_ms") return int_value(1, 600000, &c->repath_timeout_ms);
  if (key == "exclude_after") return int_value(1, 1000, &c->exclude_after);
  if (key == "ack_scope") {
    if (value == "all") {
      c->ack_scope_changed = 0;
    } else if (value == "changed") {
      c->ack_scope_changed = 1;
    } else {
      return bad("must be all or changed");
    }
    return sar::Status::OK();
  }
  if (key == "status_file") return path_value(c->status_file);
  if (key == "metrics_textfile") return path_value(c->metrics_textfile);
  if (key == "fors_schedule_group") {
    gid_t gid = 0;
    const sar::Status s = sar::LookUpGroup(value, &gid);
    if (!s.ok()) return sar::Status::Corruption(where + ": " + key + ": " + s.message());
    if (!CopyString(value, c->fors_schedule_group, sizeof c->fors_schedule_group)) {
      return bad("must be a group name of at most " +
                 std::to_string(sizeof c->fors_schedule_group - 1) + " bytes");
    }
    c->fors_schedule_gid = static_cast<long>(gid);
    return sar::Status::OK();
  }
  return sar::Status::Corruption(where + ": unknown key '" + key + "'");
}

sar::Status ParseConfig(std::string_view text, const std::string& path, OsmsarConfig* c) {
  sar::io::LineReader lines(text);
  for (std::string_view line; lines.Next(&line);) {
    line = sar::io::Trim(sar::io::StripComment(line));
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(lines.line_number());
    size_t sp = 0;
    while (sp < line.size() && !sar::io::IsSpace(line[sp])) ++sp;
    if (sp == line.size()) {
      return sar::Status::Corruption(where + ": expected '<key> <value>', got '" +
                                     std::string(line) + "'");
    }
    SAR_RETURN_IF_ERROR(SetKey(std::string(line.substr(0, sp)),
                               std::string(sar::io::Trim(line.substr(sp))), where, c));
  }
  return sar::Status::OK();
}

void SetError(char** errptr, const std::string& msg) {
  std::free(*errptr);
  *errptr = static_cast<char*>(std::malloc(msg.size() + 1));
  if (*errptr != nullptr) std::memcpy(*errptr, msg.c_str(), msg.size() + 1);
}

}  // namespace

extern "C" {

void OsmsarConfigInit(OsmsarConfig* config) {
  std::memset(config, 0, sizeof *config);
  CopyString("sar", config->engine, sizeof config->engine);
  config->num_vls = 8;
  config->delta = 1;
  config->ack_timeout_ms = 2000;
  config->repath_timeout_ms = 2000;
  config->exclude_after = 3;
  config->sar_refine = 1;
  config->sar_no_regret = 1;
  config->fors_only_where_faster = 0;
  config->sar_all_pairs_budget = 1.25;
  config->sar_refine_work = sar::kDefaultSarRefineWork;
  config->fors_schedule_gid = -1;
}

int OsmsarReadConfig(const char* path, OsmsarConfig* config, char** errptr) {
  try {
    std::string text;
    sar::Status s = sar::ReadFileToString(path, &text);
    if (s.ok()) s = ParseConfig(text, path, config);
    if (s.ok()) return 0;
    SetError(errptr, s.ToString());
  } catch (const std::exception& e) {
    SetError(errptr, std::string("reading ") + path + ": " + e.what());
  } catch (...) {
    SetError(errptr, std::string("reading ") + path + ": internal error");
  }
  return 1;
}

sar_options_t* OsmsarOptions(const OsmsarConfig* c) {
  sar_options_t* o = sar_options_create();
  if (o == nullptr) return nullptr;
  sar_options_set_engine(o, c->engine);
  sar_options_set_mapping_file(o, c->mapping_file, /*optional=*/1);
  sar_options_set_node_class_files(o, c->cn_guid_file, c->io_guid_file);
  sar_options_set_num_vls(o, c->num_vls);
  sar_options_set_threads(o, c->threads);
  sar_options_set_allow_disconnected(o, c->allow_disconnected);
  sar_options_set_migration(o, c->migration);
  sar_options_set_delta(o, c->delta);
  sar_options_set_sar_refine(o, c->sar_refine, c->sar_all_pairs_budget);
  sar_options_set_sar_refine_work(o, c->sar_refine_work);
  sar_options_set_sar_no_regret(o, c->sar_no_regret);
  sar_options_set_fors_only_where_faster(o, c->fors_only_where_faster);
  sar_options_set_job_hca_pairs_all(o, c->job_hca_pairs_all);
  return o;
}

}  // extern "C"
