// sar-route gen: generate a fat-tree topology with LIDs and optional failures.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/io/guid2lid.h"
#include "sar/io/topology.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct GenArgs {
  std::string fabric_spec;
  int parallel = 1;
  std::vector<int> hosts_per_leaf;
  int switch_ports = 0;
  bool aggregation_nodes = false;
  int lmc = 0;
  int fail_links = 0;
  int fail_switches = 0;
  uint64_t seed = 1;
  std::vector<std::string> fail_link;    // "node:port"
  std::vector<std::string> fail_switch;  // "node"
  bool allow_disconnect = false;
  std::string style = "ibsim";
  std::string out;
  std::string guid2lid_out;
};

int RunGen(const GenArgs& a) {
  sar::PgftSpec spec;
  sar::Status s = sar::ParsePgftSpec(a.fabric_spec, &spec);
  if (!s.ok()) return Fail(sar::Status::InvalidArgument("--fabric: " + s.message()));
  if (a.parallel > 1) {
    for (size_t l = 1; l < spec.p.size(); ++l) spec.p[l] *= a.parallel;
  }
  sar::GenerateOptions opts;
  opts.hosts_per_leaf = a.hosts_per_leaf;
  opts.switch_ports = a.switch_ports;
  opts.aggregation_nodes = a.aggregation_nodes;
  sar::Fabric fabric;
  s = sar::GeneratePgft(spec, opts, &fabric);
  if (!s.ok()) return Fail(sar::Status::InvalidArgument(s.message()));

  sar::FailureSet failures;
  for (const std::string& fl : a.fail_link) {
    const size_t colon = fl.rfind(':');
    int port = 0;
    if (colon == std::string::npos || std::sscanf(fl.c_str() + colon + 1, "%d", &port) != 1) {
      return Fail(sar::Status::InvalidArgument("--fail-link wants NODE:PORT, got '" + fl + "'"));
    }
    failures.links.emplace_back(fl.substr(0, colon), port);
  }
  failures.switches = a.fail_switch;
  if (a.fail_links > 0 || a.fail_switches > 0) {
    sar::RandomFailureOptions ro;
    ro.num_links = a.fail_links;
    ro.num_switches = a.fail_switches;
    ro.seed = a.seed;
    ro.keep_hcas_connected = !a.allow_disconnect;
    sar::FailureSet random;
    s = sar::PickRandomFailures(fabric, ro, &random);
    if (!s.ok()) return Fail(s);
    failures.links.insert(failures.links.end(), random.links.begin(), random.links.end());
    failures.switches.insert(failures.switches.end(), random.switches.begin(),
                             random.switches.end());
  }
  if (!failures.links.empty() || !failures.switches.empty()) {
    sar::Fabric degraded;
    s = sar::ApplyFailures(fabric, failures, &degraded);
    if (!s.ok()) return Fail(s);
    fabric = std::move(degraded);
    for (const auto& [node, port] : failures.links) {
      std::fprintf(stderr, "sar-route: failed link %s[%d]\n", node.c_str(), port);
    }
    for (const std::string& sw : failures.switches) {
      std::fprintf(stderr, "sar-route: failed switch %s\n", sw.c_str());
    }
    if (!sar::HcasConnected(fabric)) {
      std::fprintf(stderr, "sar-route: warning: some HCAs can no longer reach each other\n");
    }
  }

  sar::LidOptions lid_opts;
  lid_opts.lmc = a.lmc;
  s = sar::AssignLids(lid_opts, &fabric);
  if (!s.ok()) return Fail(s);

  sar::TopologyWriteOptions wopts;
  wopts.style =
      a.style == "ibnetdiscover" ? sar::TopologyStyle::kIbnetdiscover : sar::TopologyStyle::kIbsim;
  s = sar::WriteTopology(a.out, fabric, wopts);
  if (!s.ok()) return Fail(s);
  if (!a.guid2lid_out.empty()) {
    s = sar::WriteGuid2Lid(a.guid2lid_out, fabric);
    if (!s.ok()) return Fail(s);
  }
  std::fprintf(stderr, "sar-route: wrote %s: %d switches, %zu HCAs, %d cables, LMC %d\n",
               a.out.c_str(), fabric.num_switches(), fabric.hcas().size(), fabric.num_links(),
               a.lmc);
  return kOk;
}

}  // namespace

std::function<int()> SetupGen(CLI::App* c) {
  auto a = std::make_shared<GenArgs>();
  GenArgs& g = *a;
  c->add_option("--fabric,-f", g.fabric_spec, "ft2:M0,M1 | kary:K,N | pgft:H;m1,..;w1,..;p1,..")
      ->required();
  c->add_option("--parallel", g.parallel, "parallel cables between switch levels")
      ->check(CLI::Range(1, 64));
  c->add_option("--hosts-per-leaf", g.hosts_per_leaf, "hosts on each leaf (comma list)")
      ->delimiter(',');
  c->add_option("--switch-ports", g.switch_ports, "ports per switch (default: as needed)");
  c->add_flag("--aggregation-nodes", g.aggregation_nodes,
              "a SHARP Aggregation Node on every switch's last port (one more port)");
  c->add_option("--lmc", g.lmc, "LIDs per HCA port = 2^LMC")->check(CLI::Range(0, 7));
  c->add_option("--fail-links", g.fail_links, "cut N random switch-to-switch cables");
  c->add_option("--fail-switches", g.fail_switches, "remove N random switches");
  c->add_option("--seed", g.seed, "seed for random failures");
  c->add_option("--fail-link", g.fail_link, "cut the cable at NODE:PORT (repeatable)");
  c->add_option("--fail-switch", g.fail_switch, "remove switch NODE (repeatable)");
  c->add_flag("--allow-disconnect", g.allow_disconnect, "random failures may disconnect HCAs");
  c->add_option("--style", g.style, "ibsim (default) or ibnetdiscover")
      ->check(CLI::IsMember({"ibsim", "ibnetdiscover"}));
  c->add_option("-o,--out", g.out, "topology file to write")->required();
  c->add_option("--guid2lid", g.guid2lid_out, "also write OpenSM's guid2lid file");
  return [a] { return RunGen(*a); };
}

}  // namespace sarcli
