#include "sar/io/lft_dump.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "io/text_util.h"
#include "sar/env.h"
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

// Where each switch's table begins, for both forms: the header's switch must be in the fabric
// (or is skipped, with ignore_unknown_switches) and listed once; `current` is the table that
// the following lines fill, kSkip for an ignored switch, kNone before the first header.
struct SwitchTables {
  static constexpr int kNone = -1, kSkip = -2;
  SwitchTables(const Fabric& f, const LftReadOptions& o, const std::string& src, Lid lids)
      : fabric(f), options(o), source(src), max_lid(lids), header_line(f.num_switches(), 0) {}

  Status Begin(Guid guid, int n) {
    const NodeId node = fabric.FindByNodeGuid(guid);
    if (node == kNoNode || !fabric.is_switch(node)) {
      if (!options.ignore_unknown_switches) {
        return io::CorruptionAt(source, n,
                                "no switch with GUID " + GuidString(guid) + " in the fabric");
      }
      current = kSkip;
      return Status::OK();
    }
    current = fabric.switch_index(node);
    if (header_line[current] != 0) {
      return io::CorruptionAt(source, n,
                              "switch " + GuidString(guid) + " already listed on line " +
                                  std::to_string(header_line[current]));
    }
    header_line[current] = n;
    seen_lid.assign(max_lid + 1, false);
    return Status::OK();
  }

  const Fabric& fabric;
  const LftReadOptions& options;
  const std::string& source;
  const Lid max_lid;
  std::vector<int> header_line;  // where each switch's table began (0 = not yet)
  int current = kNone;
  std::vector<bool> seen_lid;  // LIDs already listed for the current switch
};

constexpr std::string_view kCompactMagic = "sar-lfts-compact 1";
constexpr Lid kCompactBlock = 64;  // LIDs per line of the compact form

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The compact form (docs/formats.md): "switch 0x<guid> ..." headers, then "0x<lid> <hex>"
// lines of 2 hex digits (the port, ff = no route) per LID from <lid> on.
Status ParseCompactLftDump(std::string_view text, const std::string& source, const Fabric& fabric,
                           LftSet* out, const LftReadOptions& options) {
  LftSet result(fabric);
  SwitchTables tables(fabric, options, source, result.max_lid());
  io::LineReader lines(text);
  std::string_view raw;
  while (lines.Next(&raw)) {
    const int n = lines.line_number();
    const std::string_view line = io::Trim(raw);
    if (n == 1 || line.empty() || line[0] == '#') continue;  // line 1: the magic, checked
    std::string_view words[3];
    const int num_words = FirstWords(line, words);
    if (words[0] == "switch") {
      Guid guid = 0;
      if (num_words < 2 || words[1].substr(0, 2) != "0x" ||
          !io::ParseHexDigits(words[1].substr(2), &guid)) {
        return io::ExpectedAt(source, n, "'switch 0x<guid>'", line);
      }
      SAR_RETURN_IF_ERROR(tables.Begin(guid, n));
      continue;
    }
    uint64_t first = 0;
    if (num_words != 2 || words[0].substr(0, 2) != "0x" || !io::ParseUint(words[0], &first) ||
        words[1].size() % 2 != 0 || words[1].size() > 2 * kCompactBlock) {
      return io::ExpectedAt(source, n, "'0x<first lid> <2 hex digits per LID, at most 64>'", line);
    }
    if (tables.current == SwitchTables::kNone)
      return io::CorruptionAt(source, n, "LIDs before any 'switch' line");
    if (tables.current == SwitchTables::kSkip) continue;
    const NodeId node = fabric.switches()[tables.current];
    const uint64_t count = words[1].size() / 2;
    if (first + count - 1 > result.max_lid()) {
      return io::CorruptionAt(source, n,
                              "LIDs " + std::string(words[0]) + "+" + std::to_string(count) +
                                  " outside the fabric's LIDs 1.." +
                                  std::to_string(result.max_lid()));
    }
    uint8_t* row = result.mutable_row(tables.current);
    const char* hex = words[1].data();
    const int num_ports = fabric.num_ports(node);
    for (uint64_t i = 0; i < count; ++i) {
      const int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) return io::ExpectedAt(source, n, "hex digits", line);
      const int port = hi * 16 + lo;
      const Lid lid = static_cast<Lid>(first + i);
      if (tables.seen_lid[lid]) {
        return io::CorruptionAt(
            source, n,
            "LID " + std::to_string(lid) + " listed twice for switch '" + fabric.name(node) + "'");
      }
      tables.seen_lid[lid] = true;
      if (port == LftSet::kNoRoute) continue;
      if (lid == 0) return io::CorruptionAt(source, n, "a route for LID 0");
      if (port > num_ports) {
        return io::CorruptionAt(source, n,
                                "port " + std::to_string(port) + " (LID " + std::to_string(lid) +
                                    ") of switch '" + fabric.name(node) +
                                    "' does not exist (it has " + std::to_string(num_ports) + ")");
      }
      row[lid] = static_cast<uint8_t>(port);
    }
  }
  *out = std::move(result);
  return Status::OK();
}

}  // namespace

Status ParseLftDump(std::string_view text, const std::string& source, const Fabric& fabric,
                    LftSet* out, const LftReadOptions& options) {
  if (text.substr(0, kCompactMagic.size()) == kCompactMagic &&
      (text.size() == kCompactMagic.size() || text[kCompactMagic.size()] == '\n')) {
    return ParseCompactLftDump(text, source, fabric, out, options);
  }
  LftSet result(fabric);
  SwitchTables tables(fabric, options, source, result.max_lid());
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
      SAR_RETURN_IF_ERROR(tables.Begin(guid, n));
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
    if (tables.current == SwitchTables::kNone) {
      return io::CorruptionAt(source, n, "route line before any 'Unicast lids' header");
    }
    if (tables.current == SwitchTables::kSkip) continue;
    const NodeId node = fabric.switches()[tables.current];
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
    if (tables.seen_lid[lid]) {
      return io::CorruptionAt(
          source, n,
          "LID " + io::Quote(words[0]) + " listed twice for switch '" + fabric.name(node) + "'");
    }
    tables.seen_lid[lid] = true;
    result.set_port(tables.current, static_cast<Lid>(lid), static_cast<uint8_t>(port));
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
  // At 10k hosts this is ~10 M lines (770 MB). The part of a line after the port names the
  // destination the way OpenSM's own dump does (so the files diff cleanly) and is the same on
  // every switch: it is formatted once per LID, and each line is the LID, the port and a copy.
  const Lid max_lid = lfts.max_lid();
  std::vector<std::string> suffix(static_cast<size_t>(max_lid) + 1);
  size_t suffix_bytes = 0;
  for (Lid lid = 1; lid <= max_lid; ++lid) {
    const PortRef dest = fabric.lid_owner(lid);
    std::string& s = suffix[lid];
    if (!dest.valid()) {
      s = " # no port has this LID\n";
    } else {
      s = fabric.is_switch(dest.node) ? " # Switch" : " # Channel Adapter";
      s += " portguid " + GuidString(fabric.port_guid(dest)) + ": '" +
           fabric.description(dest.node) + "'\n";
    }
    suffix_bytes += s.size();
  }
  const int num_switches = std::min<int>(lfts.num_switches(), fabric.switches().size());
  std::string out;
  // Every route line is "0xLLLL PPP" (10 bytes) and its suffix: reserve for all of them.
  out.reserve(static_cast<size_t>(num_switches) * (suffix_bytes + 10 * max_lid + 200));
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[160];
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
      // "0x%04x %03u" by hand: snprintf per line was most of the time.
      const char line[10] = {'0',
                             'x',
                             kHex[(lid >> 12) & 15],
                             kHex[(lid >> 8) & 15],
                             kHex[(lid >> 4) & 15],
                             kHex[lid & 15],
                             ' ',
                             static_cast<char>('0' + port / 100),
                             static_cast<char>('0' + port / 10 % 10),
                             static_cast<char>('0' + port % 10)};
      out.append(line, sizeof line);
      out += suffix[lid];
    }
    out += std::to_string(max_lid) + " lids dumped\n";
  }
  return out;
}

Status WriteLftDump(const std::string& path, const Fabric& fabric, const LftSet& lfts) {
  return WriteLftDump(*RealEnv(), path, fabric, lfts);
}

Status WriteLftDump(Env& env, const std::string& path, const Fabric& fabric, const LftSet& lfts) {
  return env.WriteFileAtomic(path, FormatLftDump(fabric, lfts), WriteOptions{});
}

std::string FormatCompactLftDump(const Fabric& fabric, const LftSet& lfts) {
  static constexpr char kHex[] = "0123456789abcdef";
  const Lid max_lid = lfts.max_lid();
  std::string out(kCompactMagic);
  out +=
      "\n# sar compact LFT dump (docs/formats.md): per switch, lines '0x<first lid> <2 hex "
      "digits per LID>', port ff = no route, lines of only ff left out\n";
  char buf[64];
  for (NodeId sw : fabric.switches()) {
    const int index = fabric.switch_index(sw);
    if (index >= lfts.num_switches()) break;
    std::snprintf(buf, sizeof buf, "switch 0x%016llx lid %u ",
                  static_cast<unsigned long long>(fabric.node_guid(sw)), fabric.switch_lid(sw));
    out += buf;
    out += "'" + fabric.description(sw) + "'\n";
    const uint8_t* row = lfts.row(index);
    for (Lid first = 0; first <= max_lid; first += kCompactBlock) {
      const Lid count = std::min<Lid>(kCompactBlock, max_lid + 1 - first);
      bool any = false;
      for (Lid i = 0; i < count && !any; ++i) any = first + i > 0 && row[first + i] != 0xFF;
      if (!any) continue;
      std::snprintf(buf, sizeof buf, "0x%04x ", first);
      out += buf;
      const size_t at = out.size();
      out.resize(at + 2 * count + 1);
      char* p = out.data() + at;
      for (Lid i = 0; i < count; ++i) {
        const uint8_t port = first + i == 0 ? 0xFF : row[first + i];  // LID 0 is never routed
        *p++ = kHex[port >> 4];
        *p++ = kHex[port & 15];
      }
      *p = '\n';
    }
  }
  return out;
}

Status WriteCompactLftDump(const std::string& path, const Fabric& fabric, const LftSet& lfts) {
  return WriteFileAtomic(path, FormatCompactLftDump(fabric, lfts));
}

}  // namespace sar
