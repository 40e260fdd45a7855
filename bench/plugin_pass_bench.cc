// The OpenSM plugin's whole routing pass at a scale ibsim cannot hold (issue 16): the same libsar
// C API calls osmsar_routing.c makes (sar_fabric_create on flat arrays, sar_route = engine +
// validation, sar_result_lft_row copied into per-switch tables as install_tables does), on a
// generated degraded PGFT turned into the flat arrays the plugin's flat_build makes from OpenSM's
// subnet (nodes, LID-carrying ports, cables listed once). Not a test: it prints figures
// (docs/benchmarks.md). One engine per run, so the peak RSS is that engine's.
//
//   build/bench/plugin_pass_bench --engine dmodc [--spec pgft:3;32,32,44;1,32,32;1,1,1]
//                                 [--fail-pct 1] [--threads 0] [--reroute 1]
//
// Engines that use jobs get a synthetic job mix (sar/study/job_mix.h) as the mapping file, as the
// plugin reads it. --reroute 1: the first pass carries a memory handle (sar_memory_t, as the
// plugin's passes do), then one more switch cable fails and the fabric is routed again twice,
// with the memory (engine dmodc: incremental) and without (a full pass); the tables of the two
// are compared.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sar/c.h"
#include "sar/io/job_file.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "sar/study/job_mix.h"

namespace {

using sar::bench::CpuMs;
using sar::bench::Ms;
using sar::bench::PeakRssMb;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "plugin_pass_bench: %s\n", what.c_str());
  std::exit(1);
}

// What flat_build hands to sar_fabric_create, from a sar::Fabric instead of OpenSM's subnet.
struct Flat {
  std::vector<sar_node_t> nodes;
  std::vector<sar_port_t> ports;
  std::vector<sar_link_t> links;
};

void Flatten(const sar::Fabric& f, Flat* out) {
  out->nodes.clear();
  out->ports.clear();
  out->links.clear();
  for (sar::NodeId n = 0; n < f.num_nodes(); ++n) {
    out->nodes.push_back(sar_node_t{f.node_guid(n), f.is_switch(n) ? 1 : 0, f.num_ports(n),
                                    f.description(n).c_str()});
    for (int p = f.is_switch(n) ? 0 : 1; p <= (f.is_switch(n) ? 0 : f.num_ports(n)); ++p) {
      const sar::PortRef r{n, p};
      if (f.base_lid(r) == 0) continue;
      out->ports.push_back(sar_port_t{n, p, f.port_guid(r), f.base_lid(r), f.lmc(r)});
    }
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const sar::PortRef peer = f.peer({n, p});
      if (!peer.valid() || f.port_id(peer) < f.port_id({n, p})) continue;
      // Width and speed unknown (0): the generated fabric declares no link rates.
      out->links.push_back(sar_link_t{n, p, peer.node, peer.port, 0, 0});
    }
  }
}

// One pass as the plugin makes it: the flat arrays, sar_fabric_create, sar_route, the rows into
// per-switch tables; prints its figures and notes. Dies on error.
sar_result_t* Pass(const sar::Fabric& f, const sar_options_t* options, const char* label) {
  double cpu = CpuMs();
  auto t = std::chrono::steady_clock::now();
  Flat flat;
  Flatten(f, &flat);
  const double copy_ms = Ms(t);
  t = std::chrono::steady_clock::now();
  char* err = nullptr;
  sar_fabric_t* fabric =
      sar_fabric_create(flat.nodes.data(), static_cast<int>(flat.nodes.size()), flat.ports.data(),
                        static_cast<int>(flat.ports.size()), flat.links.data(),
                        static_cast<int>(flat.links.size()), &err);
  if (fabric == nullptr) Die(std::string("sar_fabric_create: ") + (err ? err : "?"));
  const double create_ms = Ms(t);
  t = std::chrono::steady_clock::now();
  const double route_cpu0 = CpuMs();
  sar_result_t* result = sar_route(fabric, options, &err);
  const double route_cpu = CpuMs() - route_cpu0;
  if (result == nullptr) Die(std::string("sar_route: ") + (err ? err : "?"));
  const double route_ms = Ms(t);
  sar_fabric_destroy(fabric);
  // install_tables: OpenSM's new_lft per switch (max LID rounded up to a 64-LID block),
  // reset to "no path", then the row copied in.
  t = std::chrono::steady_clock::now();
  const uint32_t max_lid = sar_result_max_lid(result);
  const size_t lft_size = (max_lid / 64 + 1) * 64;
  std::vector<std::vector<uint8_t>> new_lft;
  int switches = 0;
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const uint8_t* row = sar_result_lft_row(result, static_cast<int>(i));
    if (row == nullptr) continue;
    new_lft.emplace_back(lft_size);
    std::memset(new_lft.back().data(), 0xFF, lft_size);
    std::memcpy(new_lft.back().data(), row, max_lid + 1);
    ++switches;
  }
  const double install_ms = Ms(t);
  cpu = CpuMs() - cpu;
  std::printf(
      "%s, %s: copy subnet %.0f ms, sar_fabric_create %.0f ms, sar_route %.0f ms (engine %.0f "
      "ms, validation %.0f ms; %.0f ms CPU), install %d switches %.0f ms; total %.0f ms wall, %.0f "
      "ms CPU; "
      "peak RSS so far %.0f MB\n",
      label, sar_result_engine(result), copy_ms, create_ms, route_ms, sar_result_route_ms(result),
      sar_result_check_ms(result), route_cpu, switches, install_ms,
      copy_ms + create_ms + route_ms + install_ms, cpu, PeakRssMb());
  for (int i = 0; i < sar_result_num_notes(result); ++i) {
    std::printf("  note: %s\n", sar_result_note(result, i));
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec_text = "pgft:3;32,32,44;1,32,32;1,1,1", engine = "dmodc";
  double fail_pct = 1.0;
  int threads = 0;
  bool reroute = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) Die(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--spec")
      spec_text = v;
    else if (a == "--engine")
      engine = v;
    else if (a == "--fail-pct")
      fail_pct = std::atof(v.c_str());
    else if (a == "--threads")
      threads = std::atoi(v.c_str());
    else if (a == "--reroute")
      reroute = std::atoi(v.c_str()) != 0;
    else
      Die("unknown argument '" + a + "'");
  }
  sar::PgftSpec spec;
  sar::Fabric intact, f;
  if (!sar::ParsePgftSpec(spec_text, &spec).ok() || !sar::GeneratePgft(spec, {}, &intact).ok() ||
      !sar::AssignLids({}, &intact).ok()) {
    Die("cannot build " + spec_text);
  }
  int cables = 0;
  for (sar::PortId c = 0; c < intact.num_port_slots(); ++c) cables += intact.is_inter_switch(c);
  sar::RandomFailureOptions fo;
  fo.num_links = static_cast<int>(cables / 2 * fail_pct / 100.0 + 0.5);
  fo.seed = 1;
  sar::FailureSet fs;
  if (!sar::PickRandomFailures(intact, fo, &fs).ok() || !sar::ApplyFailures(intact, fs, &f).ok()) {
    Die("cannot fail cables");
  }
  // The mapping file the plugin would read (sar-filterd writes it).
  char dir[] = "/tmp/plugin_pass_bench.XXXXXX";
  if (::mkdtemp(dir) == nullptr) Die("mkdtemp");
  const std::string mapping = std::string(dir) + "/jobs.map";
  sar::JobMapping jobs;
  if (!sar::GenerateJobMix(f, {}, &jobs).ok() || !sar::WriteJobMapping(mapping, jobs).ok()) {
    Die("cannot write the job mix");
  }
  std::printf("fabric %s: %zu hosts, %d switches, %d failed cables (%.1f%%); engine %s\n",
              spec_text.c_str(), f.Endpoints().size(), f.num_switches(), fo.num_links, fail_pct,
              engine.c_str());

  sar_options_t* options = sar_options_create();
  sar_options_set_engine(options, engine.c_str());
  sar_options_set_mapping_file(options, mapping.c_str(), 0);
  sar_options_set_threads(options, threads);
  sar_memory_t* memory = nullptr;
  if (reroute) {
    memory = sar_memory_create();
    if (memory == nullptr) Die("sar_memory_create");
    sar_options_set_memory(options, memory);
  }
  sar_result_t* result = Pass(f, options, "first pass");
  if (reroute) {
    // One more cable, picked at random among the live ones of the degraded fabric.
    sar::RandomFailureOptions more;
    more.num_links = 1;
    more.seed = 2;
    sar::FailureSet fs2;
    sar::Fabric g;
    if (!sar::PickRandomFailures(f, more, &fs2).ok() || !sar::ApplyFailures(f, fs2, &g).ok()) {
      Die("cannot fail one more cable");
    }
    std::printf("one more failed cable: %s port %d\n", fs2.links[0].first.c_str(),
                fs2.links[0].second);
    sar_result_destroy(result);
    result = Pass(g, options, "with memory");
    sar_options_t* plain = sar_options_create();
    sar_options_set_engine(plain, engine.c_str());
    sar_options_set_mapping_file(plain, mapping.c_str(), 0);
    sar_options_set_threads(plain, threads);
    sar_result_t* full = Pass(g, plain, "without memory");
    bool equal = sar_result_max_lid(full) == sar_result_max_lid(result);
    for (sar::NodeId n = 0; equal && n < g.num_nodes(); ++n) {
      const uint8_t *a = sar_result_lft_row(result, n), *b = sar_result_lft_row(full, n);
      equal = (a == nullptr) == (b == nullptr) &&
              (a == nullptr || std::memcmp(a, b, sar_result_max_lid(full) + 1) == 0);
    }
    std::printf("tables with and without memory: %s\n", equal ? "equal" : "DIFFERENT");
    sar_result_destroy(full);
    sar_options_destroy(plain);
    if (!equal) Die("the tables differ");
  }
  sar_result_destroy(result);
  sar_options_destroy(options);
  sar_memory_destroy(memory);
  ::unlink(mapping.c_str());
  ::rmdir(dir);
  return 0;
}
