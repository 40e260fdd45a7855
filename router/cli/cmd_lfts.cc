// sar-route convert-lfts and diff-lfts: rewrite and compare LFT dumps.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/io/lft_dump.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct LftArgs {
  FabricArgs fabric;
  std::string in;
  std::string other;
  std::string out;
  int max_diffs = 20;
};

int RunConvertLfts(const LftArgs& a) {
  sar::Fabric f;
  std::vector<sar::LftSet> tables;
  sar::Status s = LoadFabricAndLfts(a.fabric, {a.in}, &f, &tables);
  if (!s.ok()) return Fail(s);
  s = sar::WriteLftDump(a.out, f, tables[0]);
  if (!s.ok()) return Fail(s);
  return kOk;
}

int RunDiffLfts(const LftArgs& a) {
  sar::Fabric f;
  std::vector<sar::LftSet> tables;
  const sar::Status s = LoadFabricAndLfts(a.fabric, {a.in, a.other}, &f, &tables);
  if (!s.ok()) return Fail(s);
  const sar::LftSet& x = tables[0];
  const sar::LftSet& y = tables[1];
  long long diffs = 0;
  for (int sw = 0; sw < f.num_switches(); ++sw) {
    for (sar::Lid lid = 1; lid <= f.max_lid(); ++lid) {
      const uint8_t px = x.port(sw, lid), py = y.port(sw, lid);
      if (px == py) continue;
      if (++diffs <= a.max_diffs) {
        auto show = [](uint8_t p) {
          return p == sar::LftSet::kNoRoute ? std::string("none") : std::to_string(p);
        };
        std::printf("%s lid %u: %s port %s, %s port %s\n", f.name(f.switches()[sw]).c_str(), lid,
                    a.in.c_str(), show(px).c_str(), a.other.c_str(), show(py).c_str());
      }
    }
  }
  if (diffs == 0) {
    std::printf("identical: %d switches, LIDs 1..%u\n", f.num_switches(), f.max_lid());
    return kOk;
  }
  std::printf("%lld entries differ\n", diffs);
  return kCheckFailed;
}

}  // namespace

std::function<int()> SetupConvertLfts(CLI::App* c) {
  auto a = std::make_shared<LftArgs>();
  AddFabricOptions(c, &a->fabric);
  c->add_option("input", a->in, "LFT dump to read")->required();
  c->add_option("-o,--out", a->out, "file to write")->required();
  return [a] { return RunConvertLfts(*a); };
}

std::function<int()> SetupDiffLfts(CLI::App* c) {
  auto a = std::make_shared<LftArgs>();
  AddFabricOptions(c, &a->fabric);
  c->add_option("a", a->in, "first dump")->required();
  c->add_option("b", a->other, "second dump")->required();
  c->add_option("--max-diffs", a->max_diffs, "differences to print");
  return [a] { return RunDiffLfts(*a); };
}

}  // namespace sarcli
