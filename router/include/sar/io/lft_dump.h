// Linear forwarding table dumps. Reads all three forms seen in practice:
//  - OpenSM's opensm-lfts.dump, which is also what the `file` routing engine loads:
//      Unicast lids [0-24] of switch Lid 2 guid 0x0002c90000100000 ('leaf01'):
//      0x0001 001 # Channel Adapter portguid 0x0002c90000200001: 'h0101 HCA-1'
//      24 lids dumped
//  - `ibroute` / `dump_fts` output from the switches ("Unicast lids [0x0-0x6] of switch DR path
//    ... guid 0x... (leaf02):", route lines "0x0001 003 : (...)").
// A text whose first line is "sar-lfts-compact 1" is sar's compact form (below) instead.
// Headers must contain "Unicast lids" and " guid 0x<hex>"; route lines are "0x<lid> <port>";
// everything else is ignored. Errors say path:line.
// The writer emits every switch and every routed LID with a trailing newline, which is what the
// `file` engine needs (a switch missing from the file gets its table wiped).
#pragma once

#include <string>
#include <string_view>

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

class Env;

struct LftReadOptions {
  /// A switch GUID the fabric does not know is an error unless this is set (then it is skipped).
  bool ignore_unknown_switches = false;
};

/// Parses into *out, sized for `fabric` (LftSet(fabric)). LIDs above fabric.max_lid() are
/// rejected, as are ports above the switch's port count (the `file` engine fails the whole load
/// on those too).
Status ParseLftDump(std::string_view text, const std::string& source, const Fabric& fabric,
                    LftSet* out, const LftReadOptions& options = {});
Status ReadLftDump(const std::string& path, const Fabric& fabric, LftSet* out,
                   const LftReadOptions& options = {});

std::string FormatLftDump(const Fabric& fabric, const LftSet& lfts);
Status WriteLftDump(const std::string& path, const Fabric& fabric, const LftSet& lfts);
/// The same through `env`'s atomic write (sar/env.h), so a test Env can make it fail.
Status WriteLftDump(Env& env, const std::string& path, const Fabric& fabric, const LftSet& lfts);

/// The compact form (docs/formats.md), about 1/50 of OpenSM's text at 10k hosts: a first line
/// "sar-lfts-compact 1", then per switch "switch 0x<guid> lid <lid> '<description>'" and lines
/// "0x<first lid> <2 hex digits per LID>" of 64 LIDs each (port ff = no route; lines of only ff
/// left out). ParseLftDump/ReadLftDump recognise it by its first line, so every sar reader takes
/// both forms; OpenSM's `file` engine does not read it.
std::string FormatCompactLftDump(const Fabric& fabric, const LftSet& lfts);
Status WriteCompactLftDump(const std::string& path, const Fabric& fabric, const LftSet& lfts);

}  // namespace sar
