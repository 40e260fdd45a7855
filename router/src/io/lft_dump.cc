#include "sar/io/lft_dump.h"

#include <cctype>
#include <cstdio>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

namespace {

/// The switch GUID in a header: the hex number after " guid 0x".
bool HeaderGuid(std::string_view line, Guid* out) {
  const size_t at = line.find(" guid 0x");
  if (at == std::string_view::npos) return false;
  std::string_view digits = line.substr(at + 8);
  size_t len = 0;
  while (len < digits.size() && std::isxdigit(static_cast<unsigned char>(digits[len]))) ++len;
  if (len == 0 || len > 16) return false;
  // The GUID must end the word: "0x12ab:" would be a typo we should not half-read.
  if (len < digits.size() && !io::IsSpace(digits[len])) return false;
  return io::ParseHexDigits(digits.substr(0, len), out);
}

// Splits off up to three leading words of `line` into words[]; returns how many there were.
int FirstWords(std::string_view line, std::string_view words[3]) {
  int count = 0;
  size_t i = 0;
  while (count < 3) {
    while (i < line.size() && io::IsSpace(line[i])) ++i;
    if (i == line.size()) break;
    const size_t start = i;
    while (i < line.size() && !io::IsSpace(line[i])) ++i;
    words[count++] = line.substr(start, i - start);
  }
  return count;
}

}  // namespace

Status ParseLftDump(std::string_view text, const std::string& source, const Fabric& fabric,
                    LftSet* out, const LftReadOptions& options) {
  LftSet result(fabric);
  std::vector<int> header_line(fabric.num_switches(), 0);  // where each switch's table began
  // The table being read: a switch index, kSkip for an ignored unknown switch, or kNone before
  // the first header.
  constexpr int kNone = -1, kSkip = -2;
  int current = kNone;
  std::vector<bool> seen_lid;  // LIDs already listed for the current switch
  io::LineReader lines(text);
  std::string_view raw;
  while (lines.Next(&raw)) {
    const int n = lines.line_number();
    const std::string_view line = io::Trim(raw);
    // Route lines are the hot path (one per switch and LID): test for them first and take only
    // the words we need, without allocating.
    const bool route_line = line.substr(0, 2) == "0x";
    if (!route_line && line.find("Unicast lids") != std::string_view::npos) {
      Guid guid = 0;
      if (!HeaderGuid(line, &guid)) {
        return io::ExpectedAt(source, n, "' guid 0x<hex>' in the 'Unicast lids' header", line);
      }
      const NodeId node = fabric.FindByNodeGuid(guid);
      if (node == kNoNode || !fabric.is_switch(node)) {
        if (!options.ignore_unknown_switches) {
          return io::CorruptionAt(source, n,
                                  "no switch with GUID " + GuidString(guid) + " in the fabric");
        }
        current = kSkip;
        continue;
      }
      current = fabric.switch_index(node);
      if (header_line[current] != 0) {
        return io::CorruptionAt(source, n,
                                "switch " + GuidString(guid) + " already listed on line " +
                                    std::to_string(header_line[current]));
      }
      header_line[current] = n;
      seen_lid.assign(result.max_lid() + 1, false);
      continue;
    }
    if (!route_line) continue;  // column titles, footers, blank lines
    // "0x<lid> <port>" followed by " # comment" (OpenSM) or " : (comment)" (ibroute).
    std::string_view words[3];
    const int num_words = FirstWords(line, words);
    uint64_t lid = 0, port = 0;
    if (num_words < 2 || !io::ParseUint(words[0], &lid) || !io::ParseUint(words[1], &port) ||
        words[1].substr(0, 2) == "0x") {
      return io::ExpectedAt(source, n, "'0x<lid> <decimal port>'", line);
    }
    if (num_words > 2 && words[2][0] != '#' && words[2][0] != ':') {
      return io::ExpectedAt(source, n, "'#' or ':' after the port", line);
    }
    if (current == kNone) {
      return io::CorruptionAt(source, n, "route line before any 'Unicast lids' header");
    }
    if (current == kSkip) continue;
    const NodeId node = fabric.switches()[current];
    if (lid == 0 || lid > result.max_lid()) {
      return io::CorruptionAt(source, n,
                              "LID " + std::string(words[0]) + " outside the fabric's LIDs 1.." +
                                  std::to_string(result.max_lid()));
    }
    if (port > static_cast<uint64_t>(fabric.num_ports(node))) {
      return io::CorruptionAt(source, n,
                              "port " + std::string(words[1]) + " of switch '" + fabric.name(node) +
                                  "' does not exist (it has " +
                                  std::to_string(fabric.num_ports(node)) + ")");
    }
    if (seen_lid[lid]) {
      return io::CorruptionAt(
          source, n,
          "LID " + io::Quote(words[0]) + " listed twice for switch '" + fabric.name(node) + "'");
    }
    seen_lid[lid] = true;
    result.set_port(current, static_cast<Lid>(lid), static_cast<uint8_t>(port));
  }
  *out = std::move(result);
  return Status::OK();
}

Status ReadLftDump(const std::string& path, const Fabric& fabric, LftSet* out,
                   const LftReadOptions& options) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseLftDump(text, path, fabric, out, options);
}

std::string FormatLftDump(const Fabric& fabric, const LftSet& lfts) {
  std::string out;
  char buf[160];
  const Lid max_lid = lfts.max_lid();
  for (NodeId sw : fabric.switches()) {
    const int index = fabric.switch_index(sw);
    if (index >= lfts.num_switches()) break;
    std::snprintf(buf, sizeof buf, "Unicast lids [0-%u] of switch Lid %u guid 0x%016llx (", max_lid,
                  fabric.switch_lid(sw), static_cast<unsigned long long>(fabric.node_guid(sw)));
    out += buf;
    out += "'" + fabric.description(sw) + "'):\n";
    for (Lid lid = 1; lid <= max_lid; ++lid) {
      const uint8_t port = lfts.port(index, lid);
      if (port == LftSet::kNoRoute) continue;
      std::snprintf(buf, sizeof buf, "0x%04x %03u # ", lid, port);
      out += buf;
      // Name the destination the way OpenSM's own dump does, so the files diff cleanly.
      const PortRef dest = fabric.lid_owner(lid);
      if (!dest.valid()) {
        out += "no port has this LID\n";
        continue;
      }
      out += fabric.is_switch(dest.node) ? "Switch" : "Channel Adapter";
      out += " portguid " + GuidString(fabric.port_guid(dest)) + ": '" +
             fabric.description(dest.node) + "'\n";
    }
    out += std::to_string(max_lid) + " lids dumped\n";
  }
  return out;
}

Status WriteLftDump(const std::string& path, const Fabric& fabric, const LftSet& lfts) {
  return WriteFileAtomic(path, FormatLftDump(fabric, lfts));
}

}  // namespace sar
