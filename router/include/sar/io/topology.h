// Topology files in the ibnetdiscover format, in both of its forms:
//  - what `ibnetdiscover` prints from a live fabric: nodes named "S-<guid>"/"H-<guid>", "Ca"
//    records, "switchguid=0x..(..)" / "caguid=" per node, port GUIDs in "(...)", and LIDs in
//    the comments ("lid N lmc M"); the node description is the first quoted string after '#';
//  - what ibsim reads: quoted free names, "Hca" records, and "switchguid=" / "caguid=" lines that
//    set a per-kind GUID counter (a switch takes the counter, then +1; an HCA takes it as node
//    GUID, then +ports+1; HCA port N = node GUID + N), exactly as ibsim assigns GUIDs.
// The reader accepts both (and mixes), checks that both ends of every cable agree, and rejects
// anything malformed with "path:line: what was expected".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

enum class TopologyStyle {
  kIbsim,          // free names, "Hca" records and GUID counter lines (only where ibsim's counter
                   // would not give the node's GUID); LIDs in the comments, which ibsim takes
                   // as the ports' initial LIDs. HCA port GUIDs are always node GUID + port.
  kIbnetdiscover,  // what ibnetdiscover prints: "S-<guid>"/"H-<guid>" names (the fabric's names
                   // are lost, descriptions kept), "Ca" records, port GUIDs, LIDs
};

struct TopologyWriteOptions {
  TopologyStyle style = TopologyStyle::kIbsim;
  // Written into the port comment of links whose rate the fabric does not know (no link declares
  // one); otherwise each link's declared rate (or the fabric's nominal rate) is written.
  std::string link_speed = "4xHDR";
};

/// Parses `text`; `source` (a path) prefixes error messages. *out must be empty. On error *out
/// is left in an unspecified state. What the reader accepts but a user should know (LIDs 65535,
/// skipped ibnetdiscover diagnostics) is appended to *warnings ("path:line: ...") if given.
Status ParseTopology(std::string_view text, const std::string& source, Fabric* out,
                     std::vector<std::string>* warnings = nullptr);
Status ReadTopology(const std::string& path, Fabric* out,
                    std::vector<std::string>* warnings = nullptr);

std::string FormatTopology(const Fabric& fabric, const TopologyWriteOptions& options);
/// Atomic write (see file_util.h).
Status WriteTopology(const std::string& path, const Fabric& fabric,
                     const TopologyWriteOptions& options);

/// The fabric as ibsim simulates it from the kIbsim style: every HCA port GUID is node GUID +
/// port, whatever the source had (on ConnectX HCAs the port GUID equals the node GUID). A
/// guid2lid handed to OpenSM on the test bed must be keyed by these GUIDs, or OpenSM gives the
/// HCAs new LIDs. LIDs, names and cables are unchanged.
Fabric WithIbsimPortGuids(const Fabric& fabric);

}  // namespace sar
