#include "sar/io/guid2lid.h"

#include <cstdio>
#include <unordered_set>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

Status ParseGuid2Lid(std::string_view text, const std::string& source,
                     std::vector<Guid2LidEntry>* out) {
  std::vector<Guid2LidEntry> result;
  std::unordered_set<Guid> seen;
  io::LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const int n = lines.line_number();
    const std::vector<std::string_view> words = io::SplitWords(io::StripComment(line));
    if (words.empty()) continue;
    uint64_t guid = 0, min_lid = 0, max_lid = 0;
    if (words.size() != 3 || !io::ParseUint(words[0], &guid) ||
        !io::ParseUint(words[1], &min_lid) || !io::ParseUint(words[2], &max_lid)) {
      return io::ExpectedAt(source, n, "'0x<port guid> 0x<min lid> 0x<max lid>'", io::Trim(line));
    }
    if (min_lid == 0 || min_lid > max_lid || max_lid > kMaxUnicastLid) {
      return io::ExpectedAt(source, n, "a LID range within 0x1..0xbfff", io::Trim(line));
    }
    if (!seen.insert(guid).second) {
      return io::CorruptionAt(source, n, "port GUID " + io::Quote(words[0]) + " listed twice");
    }
    result.push_back({guid, static_cast<Lid>(min_lid), static_cast<Lid>(max_lid)});
  }
  *out = std::move(result);
  return Status::OK();
}

Status ReadGuid2Lid(const std::string& path, std::vector<Guid2LidEntry>* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseGuid2Lid(text, path, out);
}

Status ApplyGuid2Lid(const std::vector<Guid2LidEntry>& entries, Fabric* fabric, int* skipped) {
  // Work on a copy so that a failure leaves *fabric as it was.
  Fabric result = *fabric;
  result.ClearLids();
  int unknown = 0;
  char guid_text[24];
  for (const Guid2LidEntry& e : entries) {
    const PortRef port = result.FindByPortGuid(e.port_guid);
    if (!port.valid()) {
      ++unknown;
      continue;
    }
    std::snprintf(guid_text, sizeof guid_text, "0x%016llx",
                  static_cast<unsigned long long>(e.port_guid));
    if (e.min_lid == 0 || e.max_lid < e.min_lid || e.max_lid > kMaxUnicastLid) {
      return Status::InvalidArgument(std::string("port ") + guid_text + ": bad LID range " +
                                     std::to_string(e.min_lid) + ".." + std::to_string(e.max_lid));
    }
    const Lid count = e.max_lid - e.min_lid + 1;
    if ((count & (count - 1)) != 0 || count > 128) {
      return Status::InvalidArgument(std::string("port ") + guid_text + ": LID range " +
                                     std::to_string(e.min_lid) + ".." + std::to_string(e.max_lid) +
                                     " is not 2^LMC LIDs (LMC 0..7)");
    }
    int lmc = 0;
    while ((Lid{1} << lmc) < count) ++lmc;
    const Status s = result.SetLid(port, e.min_lid, lmc);
    if (!s.ok())
      return Status::InvalidArgument(std::string("port ") + guid_text + ": " + s.message());
  }
  *fabric = std::move(result);
  if (skipped) *skipped = unknown;
  return Status::OK();
}

std::string FormatGuid2Lid(const Fabric& fabric) {
  std::string out;
  char buf[64];
  auto emit = [&](PortRef p) {
    const Lid base = fabric.base_lid(p);
    if (base == 0) return;
    const Lid top = base + (Lid{1} << fabric.lmc(p)) - 1;
    // OpenSM separates entries with a blank line; we write the same so diffs against its cache
    // stay readable.
    std::snprintf(buf, sizeof buf, "0x%016llx 0x%04x 0x%04x\n\n",
                  static_cast<unsigned long long>(fabric.port_guid(p)), base, top);
    out += buf;
  };
  for (NodeId n = 0; n < fabric.num_nodes(); ++n) {
    if (fabric.is_switch(n)) {
      emit({n, 0});
    } else {
      for (int p = 1; p <= fabric.num_ports(n); ++p) emit({n, p});
    }
  }
  return out;
}

Status WriteGuid2Lid(const std::string& path, const Fabric& fabric) {
  return WriteFileAtomic(path, FormatGuid2Lid(fabric));
}

}  // namespace sar
