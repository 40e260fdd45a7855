// Helpers for the reader/writer tests in this directory (header-only; not part of libsar).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "sar/model/fabric.h"

namespace sar::io::testing {

/// Path of a file under tests/data/ of the source tree (SAR_SOURCE_DIR, set by CMake).
inline std::string TestDataPath(const std::string& name) {
  return std::string(SAR_SOURCE_DIR) + "/tests/data/" + name;
}

/// Path of a public ibnetdiscover dump in shared/data/fabrics/, which sits beside the source
/// tree (<clone>/../shared); the dumps are never copied into the project. See RealFabricOrSkip.
inline std::string RealFabricPath(const std::string& name) {
  return std::string(SAR_SOURCE_DIR) + "/../shared/data/fabrics/" + name;
}

/// Skips the calling test (GTEST_SKIP) when a dump of shared/data/fabrics/ is absent.
#define SAR_SKIP_IF_NO_REAL_FABRIC(path)                                              \
  do {                                                                                \
    if (::access((path).c_str(), R_OK) != 0) {                                        \
      GTEST_SKIP() << (path) << " is absent (shared/data/fabrics/ beside the clone)"; \
    }                                                                                 \
  } while (0)

/// A fresh temporary directory (removed by the caller if it cares; tests leave it in /tmp).
inline std::string MakeTempDir() {
  std::string tmpl = "/tmp/sar_io_test.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

struct CompareOptions {
  bool lids = true;        // compare base LIDs and LMCs
  bool port_guids = true;  // compare every port GUID (not only node GUIDs)
};

inline std::string GuidText(Guid g) { return GuidString(g); }

/// Compares two fabrics the way the tools see them: nodes matched by node GUID (names and
/// order may differ), then kind, port count, description, port GUIDs, cables (by peer GUID and
/// port) and LIDs. Returns "" if equal, else the first difference.
inline std::string DiffFabrics(const Fabric& a, const Fabric& b, CompareOptions opt = {}) {
  if (a.num_nodes() != b.num_nodes()) {
    return "node count " + std::to_string(a.num_nodes()) + " vs " + std::to_string(b.num_nodes());
  }
  if (a.num_links() != b.num_links()) {
    return "cable count " + std::to_string(a.num_links()) + " vs " + std::to_string(b.num_links());
  }
  for (NodeId na = 0; na < a.num_nodes(); ++na) {
    const Guid g = a.node_guid(na);
    const NodeId nb = b.FindByNodeGuid(g);
    const std::string who = "node " + GuidText(g) + " ('" + a.name(na) + "')";
    if (nb == kNoNode) return who + " missing";
    if (a.kind(na) != b.kind(nb)) return who + ": kind differs";
    if (a.num_ports(na) != b.num_ports(nb)) return who + ": port count differs";
    if (a.description(na) != b.description(nb)) {
      return who + ": description '" + a.description(na) + "' vs '" + b.description(nb) + "'";
    }
    for (int p = 0; p <= a.num_ports(na); ++p) {
      const std::string port = who + " port " + std::to_string(p);
      const bool has_guid = a.is_switch(na) ? p == 0 : p > 0;
      if (opt.port_guids && has_guid && a.port_guid({na, p}) != b.port_guid({nb, p})) {
        return port + ": port GUID " + GuidText(a.port_guid({na, p})) + " vs " +
               GuidText(b.port_guid({nb, p}));
      }
      if (p > 0) {
        const PortRef pa = a.peer({na, p}), pb = b.peer({nb, p});
        if (pa.valid() != pb.valid()) return port + ": cabled on one side only";
        if (pa.valid() && (a.node_guid(pa.node) != b.node_guid(pb.node) || pa.port != pb.port)) {
          return port + ": cabled to " + GuidText(a.node_guid(pa.node)) + "[" +
                 std::to_string(pa.port) + "] vs " + GuidText(b.node_guid(pb.node)) + "[" +
                 std::to_string(pb.port) + "]";
        }
      }
      if (opt.lids &&
          (a.base_lid({na, p}) != b.base_lid({nb, p}) || a.lmc({na, p}) != b.lmc({nb, p}))) {
        return port + ": LID " + std::to_string(a.base_lid({na, p})) + "/" +
               std::to_string(a.lmc({na, p})) + " vs " + std::to_string(b.base_lid({nb, p})) + "/" +
               std::to_string(b.lmc({nb, p}));
      }
    }
  }
  return "";
}

}  // namespace sar::io::testing
