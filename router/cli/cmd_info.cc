// sar-route info: summarise a topology.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/model/failures.h"
#include "sar/model/node_classes.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct InfoArgs {
  FabricArgs fabric;
  bool json = false;
};

int RunInfo(const InfoArgs& a) {
  sar::Fabric f;
  sar::Status s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);
  int inter_switch = 0;
  for (sar::PortId c = 0; c < f.num_port_slots(); ++c) inter_switch += f.is_inter_switch(c);
  const auto endpoints = f.Endpoints();
  Json j;
  j["switches"] = f.num_switches();
  j["hcas"] = f.hcas().size();
  j["endpoints"] = endpoints.size();
  j["cables"] = f.num_links();
  j["switch_channels"] = inter_switch;
  j["max_lid"] = f.max_lid();
  j["first_hca"] = f.hcas().empty() ? "" : f.name(f.hcas().front());
  j["connected"] = sar::HcasConnected(f);
  const sar::NodeClassCounts classes = sar::CountNodeClasses(f);
  j["classes"] = {{"hosts", classes.hosts},
                  {"host_hcas", classes.host_hcas},
                  {"nameless_hcas", classes.nameless_hcas},
                  {"aggregation_nodes", classes.aggregation_nodes}};
  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf(
        "%s: %d switches, %zu HCAs (%zu cabled ports), %d cables, %d switch-to-switch "
        "channels, max LID %u, HCAs %sconnected\n",
        a.fabric.topology.c_str(), f.num_switches(), f.hcas().size(), endpoints.size(),
        f.num_links(), inter_switch, f.max_lid(), j["connected"].get<bool>() ? "" : "NOT ");
    std::printf("classes: %d hosts on %d HCAs (%d named by node GUID), %d Aggregation Nodes\n",
                classes.hosts, classes.host_hcas, classes.nameless_hcas, classes.aggregation_nodes);
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupInfo(CLI::App* c) {
  auto a = std::make_shared<InfoArgs>();
  AddFabricOptions(c, &a->fabric);
  c->add_flag("--json", a->json, "print JSON");
  return [a] { return RunInfo(*a); };
}

}  // namespace sarcli
