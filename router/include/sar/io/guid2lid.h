// OpenSM's LID cache file ($OSM_CACHE_DIR/guid2lid): one "0x<port guid> 0x<min lid> 0x<max lid>"
// per line (OpenSM separates entries with blank lines). Writing one before OpenSM's first start
// makes OpenSM use exactly our LIDs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

struct Guid2LidEntry {
  Guid port_guid = 0;
  Lid min_lid = 0;
  Lid max_lid = 0;
};

Status ParseGuid2Lid(std::string_view text, const std::string& source,
                     std::vector<Guid2LidEntry>* out);
Status ReadGuid2Lid(const std::string& path, std::vector<Guid2LidEntry>* out);

/// Replaces the fabric's LIDs with the entries (LMC = log2 of the range size); ports not listed
/// end up without a LID. Entries whose GUID is not in the fabric are skipped and counted in
/// *skipped. Fails (leaving *fabric unchanged) on a range that is not a power of two, is
/// misaligned, or clashes.
Status ApplyGuid2Lid(const std::vector<Guid2LidEntry>& entries, Fabric* fabric,
                     int* skipped = nullptr);

/// One entry per port with a LID: switches' port 0 and HCA ports.
std::string FormatGuid2Lid(const Fabric& fabric);
Status WriteGuid2Lid(const std::string& path, const Fabric& fabric);

}  // namespace sar
