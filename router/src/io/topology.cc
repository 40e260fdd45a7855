#include "sar/io/topology.h"

#include <cctype>
#include <cstdio>
#include <optional>
#include <unordered_map>
#include <vector>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

namespace {

// ibsim's GUID counters before any "switchguid="/"caguid=" line (sim_net.c starts there).
constexpr Guid kIbsimFirstSwitchGuid = 0x100000;
constexpr Guid kIbsimFirstCaGuid = 0x200000;

/// One port line: "[port](guid) "remote"[rport](guid) # comment", kept until every node is known.
struct PortDecl {
  PortRef local;
  std::string remote_name;
  int remote_port = 0;
  std::optional<Guid> remote_port_guid;
  int line = 0;
};

/// A cursor over one line with the small scanners the record syntax needs.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}
  std::string_view rest() const { return s_; }
  bool done() const { return s_.empty(); }
  bool Peek(char c) const { return !s_.empty() && s_.front() == c; }
  void SkipSpace() {
    while (!s_.empty() && io::IsSpace(s_.front())) s_.remove_prefix(1);
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    s_.remove_prefix(1);
    return true;
  }
  bool ConsumeWord(std::string_view w) {
    if (s_.substr(0, w.size()) != w) return false;
    s_.remove_prefix(w.size());
    return true;
  }
  /// Decimal digits.
  bool Int(int* out) {
    size_t i = 0;
    int64_t v = 0;
    while (i < s_.size() && s_[i] >= '0' && s_[i] <= '9' && v <= 1000000)
      v = v * 10 + (s_[i++] - '0');
    if (i == 0 || v > 1000000) return false;
    s_.remove_prefix(i);
    *out = static_cast<int>(v);
    return true;
  }
  /// "[<decimal>]".
  bool BracketedInt(int* out) {
    Scanner save = *this;
    if (Consume('[') && Int(out) && Consume(']')) return true;
    *this = save;
    return false;
  }
  /// "(<hex digits>)" if present: returns false only when it is present but malformed.
  bool OptionalParenGuid(std::optional<Guid>* out) {
    if (!Peek('(')) return true;
    const size_t close = s_.find(')');
    if (close == std::string_view::npos) return false;
    Guid g = 0;
    if (!io::ParseHexDigits(s_.substr(1, close - 1), &g)) return false;
    *out = g;
    s_.remove_prefix(close + 1);
    return true;
  }
  /// "\"<text>\"", text may be empty.
  bool Quoted(std::string_view* out) {
    if (!Peek('"')) return false;
    const size_t close = s_.find('"', 1);
    if (close == std::string_view::npos) return false;
    *out = s_.substr(1, close - 1);
    s_.remove_prefix(close + 1);
    return true;
  }

 private:
  std::string_view s_;
};

/// The node description in a header comment, ibsim's way: after '#', a quoted string, or else
/// the text up to the first " enhanced port ", " base port ", " lid " or " lmc ".
/// *rest receives what follows it. False on an unterminated quote.
bool ParseDescription(std::string_view comment, std::string_view* desc, std::string_view* rest) {
  Scanner sc(comment);
  sc.SkipSpace();
  if (sc.Peek('"')) {
    if (!sc.Quoted(desc)) return false;
    *rest = sc.rest();
    return true;
  }
  std::string_view s = sc.rest();
  size_t end = s.size();
  for (std::string_view marker : {" enhanced port ", " base port ", " lid ", " lmc "}) {
    const size_t at = s.find(marker);
    if (at != std::string_view::npos && at < end) end = at;
  }
  *desc = io::Trim(s.substr(0, end));
  *rest = s.substr(end);
  return true;
}

/// "lid <n>" and "lmc <n>" among the words of `text`; other words are ignored.
bool ParseLidLmc(std::string_view text, uint64_t* lid, uint64_t* lmc) {
  const std::vector<std::string_view> words = io::SplitWords(text);
  for (size_t i = 0; i < words.size(); ++i) {
    uint64_t* target = words[i] == "lid" ? lid : words[i] == "lmc" ? lmc : nullptr;
    if (target == nullptr) continue;
    if (i + 1 >= words.size() || !io::ParseUint(words[i + 1], target)) return false;
    ++i;
  }
  return true;
}

/// Text we can write back inside quotes: no '"' and no control characters but tab.
bool QuotableText(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || u == 0x7f || (u < 0x20 && c != '\t')) return false;
  }
  return true;
}

/// A line ibnetdiscover (or the libraries under it) writes to stderr, caught in the same file by
/// "2>&1" or a terminal capture: "ibwarn: ...", "iberror: ...", "ibnetdiscover: iberror: ...",
/// or libibnetdisc's "src/query_smp.c:195; umad (...) bad status 110; ...".
bool IsToolDiagnostic(std::string_view line) {
  for (std::string_view tag : {"ibwarn:", "iberror:", "ibpanic:", "ibdebug:"}) {
    if (line.substr(0, tag.size()) == tag) return true;
    const size_t colon = line.find(": ");
    if (colon != std::string_view::npos && line.substr(colon + 2, tag.size()) == tag &&
        line.substr(0, colon).find_first_of(" \t\"[") == std::string_view::npos) {
      return true;
    }
  }
  // "<file>.c:<line>; "
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon < 3 || line.substr(colon - 2, 2) != ".c") {
    return false;
  }
  if (line.substr(0, colon).find_first_of(" \t\"[") != std::string_view::npos) return false;
  size_t i = colon + 1;
  while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
  return i > colon + 1 && i < line.size() && line[i] == ';';
}

bool ValidName(std::string_view name) {
  // ibsim reserves '#' and '@' in node ids; accepting them would write files ibsim rejects.
  return !name.empty() && name.find_first_of("#@") == std::string_view::npos && QuotableText(name);
}

class TopologyParser {
 public:
  TopologyParser(const std::string& source, Fabric* fabric, std::vector<std::string>* warnings)
      : source_(source), fabric_(*fabric), warnings_(warnings) {}

  Status Parse(std::string_view text) {
    io::LineReader lines(text);
    std::string_view line;
    while (lines.Next(&line)) {
      line_ = lines.line_number();
      SAR_RETURN_IF_ERROR(ParseLine(line));
    }
    // An empty topology is what a failed ibnetdiscover leaves behind; routing it would give an
    // empty table file that looks like success.
    if (fabric_.num_nodes() == 0) {
      return Status::Corruption(source_ +
                                ": no switch or HCA records (an empty or truncated file?)");
    }
    SAR_RETURN_IF_ERROR(ResolveCables());
    SAR_RETURN_IF_ERROR(CheckPortGuids());
    if (warnings_ != nullptr) {
      if (diagnostics_ > 0) {
        warnings_->push_back(source_ + ":" + std::to_string(first_diagnostic_) + ": skipped " +
                             std::to_string(diagnostics_) +
                             " line(s) of ibnetdiscover's own diagnostics (its stderr), not "
                             "topology; the fabric may be incomplete where discovery failed");
      }
      if (unassigned_lids_ > 0) {
        warnings_->push_back(source_ + ":" + std::to_string(first_unassigned_lid_) + ": " +
                             std::to_string(unassigned_lids_) +
                             " port(s) with LID 65535 (not yet assigned by a subnet manager); "
                             "they have no LID from the file");
      }
    }
    return Status::OK();
  }

 private:
  Status Expected(const std::string& what, std::string_view found) const {
    return io::ExpectedAt(source_, line_, what, found);
  }
  Status Error(const std::string& message) const {
    return io::CorruptionAt(source_, line_, message);
  }

  Status ParseLine(std::string_view raw) {
    const std::string_view line = io::Trim(raw);
    if (line.empty()) {  // a blank line ends a record
      current_ = kNoNode;
      return Status::OK();
    }
    if (line.front() == '#') return Status::OK();  // comments do not end a record (as in ibsim)
    if (IsToolDiagnostic(line)) {                  // nor does a diagnostic interleaved by 2>&1
      if (diagnostics_++ == 0) first_diagnostic_ = line_;
      return Status::OK();
    }
    if (line.front() == '[') {
      if (current_ == kNoNode) return Expected("a port line inside a Switch/Ca record", line);
      return ParsePortLine(line);
    }
    current_ = kNoNode;
    // ibnetdiscover's heading before the nodes it could not group into a chassis.
    if (line == "Non-Chassis Nodes") return Status::OK();
    const size_t key_end = line.find_first_of("=+ \t");
    const std::string_view key = line.substr(0, key_end);
    // A terminal capture can lose the tab between the keyword and the port count ("Switch41").
    size_t word = 0;
    while (word < line.size() && std::isalpha(static_cast<unsigned char>(line[word]))) ++word;
    const std::string_view head = line.substr(0, word);
    const bool glued = word < line.size() && line[word] >= '0' && line[word] <= '9';
    if (key == "Switch" || (glued && head == "Switch")) {
      return ParseHeader(line, NodeKind::kSwitch, head.size());
    }
    if (key == "Ca" || key == "Hca" || (glued && (head == "Ca" || head == "Hca"))) {
      return ParseHeader(line, NodeKind::kHca, head.size());
    }
    if (key == "switchguid") return ParseGuidBase(line, key.size(), &switch_base_, &switch_next_);
    if (key == "caguid" || key == "hcaguids") {
      return ParseGuidBase(line, key.size(), &ca_base_, &ca_next_);
    }
    if (key == "vendid" || key == "devid" || key == "sysimgguid" || key == "width" ||
        key == "speed") {
      uint64_t ignored = 0;
      if (key_end == std::string_view::npos || line[key_end] != '=' ||
          !io::ParseUint(io::Trim(line.substr(key_end + 1)), &ignored)) {
        return Expected("'" + std::string(key) + "=<number>'", line);
      }
      return Status::OK();
    }
    return Expected("a Switch/Ca/Hca record, a port line or a 'key=value' line", line);
  }

  // "switchguid=0x<hex>[(<hex port guid>)]" or ibsim's relative "switchguid+<n>".
  Status ParseGuidBase(std::string_view line, size_t key_len, Guid* base, Guid* next) {
    Scanner sc(line.substr(key_len));
    const bool relative = sc.Consume('+');
    if (!relative && !sc.Consume('=')) return Expected("'=' after the GUID keyword", line);
    std::string_view rest = sc.rest();
    const size_t paren = rest.find('(');
    Guid value = 0;
    if (!io::ParseUint(io::Trim(rest.substr(0, paren)), &value)) {
      return Expected("a GUID ('0x<hex>')", line);
    }
    pending_switch_port_guid_.reset();
    if (paren != std::string_view::npos) {
      Scanner p(rest.substr(paren));
      std::optional<Guid> port_guid;
      if (!p.OptionalParenGuid(&port_guid) || !io::Trim(p.rest()).empty()) {
        return Expected("'(<hex port guid>)' at the end", line);
      }
      if (base == &switch_base_) pending_switch_port_guid_ = port_guid;
    }
    if (relative) {
      *next = *base + value;
    } else {
      *base = value;
      *next = value;
    }
    return Status::OK();
  }

  // Switch <ports> "<name>" [# <description> [enhanced port 0] [lid <n> lmc <n>]]
  // Ca|Hca <ports> "<name>" [# <description>]
  Status ParseHeader(std::string_view line, NodeKind kind, size_t key_len) {
    Scanner sc(line.substr(key_len));
    sc.SkipSpace();
    int num_ports = 0;
    std::string_view name;
    if (!sc.Int(&num_ports)) return Expected("'<number of ports> \"<name>\"' after the type", line);
    sc.SkipSpace();
    if (!sc.Quoted(&name)) return Expected("a quoted node name", line);
    if (!ValidName(name))
      return Expected("a non-empty node name without '#', '@' or control characters", line);
    sc.SkipSpace();
    std::string_view desc = name;
    uint64_t lid = 0, lmc = 0;
    if (!sc.done()) {
      if (!sc.Consume('#')) return Expected("'#' and a comment after the node name", line);
      std::string_view rest;
      if (!ParseDescription(sc.rest(), &desc, &rest)) {
        return Expected("a closing '\"' in the node description", line);
      }
      if (!QuotableText(desc)) {
        return Expected("a node description without '\"' or control characters", line);
      }
      if (desc.empty()) desc = name;  // ibsim does the same
      if (kind == NodeKind::kSwitch && !ParseLidLmc(rest, &lid, &lmc)) {
        return Expected("'lid <number>' / 'lmc <number>' in the comment", line);
      }
    }
    Guid* next = kind == NodeKind::kSwitch ? &switch_next_ : &ca_next_;
    const Guid guid = *next;
    std::string err;
    const NodeId node =
        fabric_.AddNode(kind, num_ports, guid, std::string(name), std::string(desc), &err);
    if (node == kNoNode) return Error(err);
    *next += kind == NodeKind::kSwitch ? 1 : static_cast<Guid>(num_ports) + 1;
    decl_of_slot_.resize(fabric_.num_port_slots(), -1);
    guid_line_.resize(fabric_.num_port_slots(), 0);
    node_line_.push_back(line_);
    if (kind == NodeKind::kSwitch && pending_switch_port_guid_) {
      SAR_RETURN_IF_ERROR(SetPortGuid({node, 0}, *pending_switch_port_guid_));
    }
    pending_switch_port_guid_.reset();
    if (lid != 0) SAR_RETURN_IF_ERROR(SetLid({node, 0}, lid, lmc));
    current_ = node;
    return Status::OK();
  }

  // A port GUID the file gives. Only GUIDs the file gives are checked against each other here:
  // the defaults (node GUID + port) of the ports it gives none for are checked once all are
  // known (CheckPortGuids), since a dual-port HCA's default may be its neighbour's real GUID.
  Status SetPortGuid(PortRef p, Guid guid) {
    const PortId id = fabric_.port_id(p);
    const auto [it, inserted] = given_guids_.emplace(guid, id);
    if (!inserted && it->second != id) {
      const PortRef owner = fabric_.port_ref(it->second);
      return Error("port GUID " + GuidString(guid) + " already belongs to '" +
                   fabric_.name(owner.node) + "' port " + std::to_string(owner.port) + " (line " +
                   std::to_string(guid_line_[it->second]) + ")");
    }
    if (fabric_.FindByNodeGuid(guid) != kNoNode && fabric_.FindByNodeGuid(guid) != p.node) {
      return Error("port GUID " + GuidString(guid) + " is another node's GUID");
    }
    fabric_.set_port_guid(p, guid);
    guid_line_[id] = line_;
    return Status::OK();
  }

  // Ports in use (switch port 0, cabled HCA ports) must not share a GUID, given or default.
  Status CheckPortGuids() {
    PortRef clash;
    const Status s = fabric_.CheckPortGuids(&clash);
    if (s.ok()) return s;
    const PortId id = fabric_.port_id(clash);
    line_ = clash.port == 0 ? node_line_[clash.node] : decls_[decl_of_slot_[id]].line;
    std::string hint;
    if (guid_line_[id] == 0) {
      hint = fabric_.is_switch(clash.node)
                 ? " (the switch's node GUID, as the file gives no '(port GUID)')"
                 : " (node GUID + port number, as the file gives no '(port GUID)' for it)";
    }
    return Error(s.message() + hint);
  }

  Status SetLid(PortRef p, uint64_t lid, uint64_t lmc) {
    if (lid == 0xffff) {  // what a port reports before a subnet manager gave it a LID
      if (unassigned_lids_++ == 0) first_unassigned_lid_ = line_;
      return Status::OK();
    }
    if (lid > kMaxUnicastLid || lmc > 7) {
      return Error("LID " + std::to_string(lid) + " / LMC " + std::to_string(lmc) +
                   " out of range");
    }
    const Status s = fabric_.SetLid(p, static_cast<Lid>(lid), static_cast<int>(lmc));
    return s.ok() ? s : Error(s.message());
  }

  // [<port>](<port guid>) "<remote>"[<remote port>](<remote port guid>) # comment
  Status ParsePortLine(std::string_view line) {
    const bool is_switch = fabric_.is_switch(current_);
    Scanner sc(line);
    PortDecl decl;
    decl.line = line_;
    decl.local.node = current_;
    std::optional<Guid> local_guid;
    if (!sc.BracketedInt(&decl.local.port)) return Expected("'[<port>]'", line);
    if (!sc.OptionalParenGuid(&local_guid)) return Expected("'(<hex port guid>)'", line);
    sc.SkipSpace();
    std::string_view remote;
    if (!sc.Quoted(&remote)) return Expected("a quoted remote node name after the port", line);
    if (!ValidName(remote))
      return Expected("a non-empty node name without '#', '@' or control characters", line);
    decl.remote_name = std::string(remote);
    if (!sc.BracketedInt(&decl.remote_port)) {
      return Expected("'[<remote port>]' after the remote name", line);
    }
    if (!sc.OptionalParenGuid(&decl.remote_port_guid)) {
      return Expected("'(<hex port guid>)'", line);
    }
    sc.SkipSpace();
    std::string_view comment;
    if (!sc.done()) {
      if (!sc.Consume('#')) return Expected("'#' and a comment after the remote port", line);
      comment = sc.rest();
    }

    const int port = decl.local.port;
    if (port < 1 || port > fabric_.num_ports(current_)) {
      return Error("node '" + fabric_.name(current_) + "' has no port " + std::to_string(port) +
                   " (ports 1.." + std::to_string(fabric_.num_ports(current_)) + ")");
    }
    if (decl.remote_port < 1) return Error("remote port must be at least 1");
    int& slot_decl = decl_of_slot_[fabric_.port_id(decl.local)];
    if (slot_decl != -1) {
      return Error("port " + std::to_string(port) + " of '" + fabric_.name(current_) +
                   "' already listed on line " + std::to_string(decls_[slot_decl].line));
    }
    if (local_guid) {
      if (is_switch) return Expected("no '(guid)' after a switch port number", line);
      SAR_RETURN_IF_ERROR(SetPortGuid(decl.local, *local_guid));
    }
    SAR_RETURN_IF_ERROR(ParseRate(comment, decl.local));
    if (!is_switch) {
      // The HCA port's own LID comes before the remote's quoted description.
      uint64_t lid = 0, lmc = 0;
      if (!ParseLidLmc(comment.substr(0, comment.find('"')), &lid, &lmc)) {
        return Expected("'lid <number> lmc <number>' in the comment", line);
      }
      if (lid != 0) SAR_RETURN_IF_ERROR(SetLid(decl.local, lid, lmc));
    }
    slot_decl = static_cast<int>(decls_.size());
    decls_.push_back(std::move(decl));
    return Status::OK();
  }

  // The link rate ibnetdiscover prints last ("... lid 3 4xEDR"): a word after the remote's quoted
  // description that starts with "<digits>x". Anything that looks like one must be one, so a
  // typo does not silently become a full-rate link.
  Status ParseRate(std::string_view comment, PortRef local) {
    const size_t quote = comment.rfind('"');
    const std::string_view tail =
        quote == std::string_view::npos ? comment : comment.substr(quote + 1);
    for (std::string_view w : io::SplitWords(tail)) {
      size_t digits = 0;
      while (digits < w.size() && w[digits] >= '0' && w[digits] <= '9') ++digits;
      if (digits == 0 || digits == w.size() || w[digits] != 'x') continue;
      LinkRate rate;
      if (!ParseLinkRate(w, &rate)) {
        return Expected(
            "a link rate such as '4xEDR' (width 1x, 2x, 4x, 8x or 12x; speed SDR, DDR, QDR, "
            "FDR10, FDR, EDR, HDR, NDR or XDR)",
            w);
      }
      fabric_.set_port_rate(local, rate);
    }
    return Status::OK();
  }

  // Every cable is listed on both ends; they must name each other.
  Status ResolveCables() {
    for (const PortDecl& d : decls_) {
      line_ = d.line;
      const NodeId remote = fabric_.FindByName(d.remote_name);
      if (remote == kNoNode) return Error("unknown node '" + d.remote_name + "'");
      const PortRef far{remote, d.remote_port};
      if (d.remote_port > fabric_.num_ports(remote)) {
        return Error("node '" + d.remote_name + "' has no port " + std::to_string(d.remote_port));
      }
      const std::string here =
          "'" + fabric_.name(d.local.node) + "'[" + std::to_string(d.local.port) + "]";
      const std::string there = "'" + d.remote_name + "'[" + std::to_string(d.remote_port) + "]";
      const int back = decl_of_slot_[fabric_.port_id(far)];
      if (back == -1) {
        return Error("cable " + here + " -> " + there + " is not listed on the " + there + " end");
      }
      const PortDecl& b = decls_[back];
      if (fabric_.FindByName(b.remote_name) != d.local.node || b.remote_port != d.local.port) {
        return Error("ends disagree: this line cables " + here + " to " + there + ", line " +
                     std::to_string(b.line) + " cables " + there + " to '" + b.remote_name + "'[" +
                     std::to_string(b.remote_port) + "]");
      }
      if (d.remote_port_guid && !fabric_.is_switch(remote) &&
          guid_line_[fabric_.port_id(far)] == 0) {
        // The far end's own line gave no GUID: this one is the file's word for it.
        SAR_RETURN_IF_ERROR(SetPortGuid(far, *d.remote_port_guid));
      } else if (d.remote_port_guid && *d.remote_port_guid != fabric_.port_guid(far)) {
        return Error("port GUID " + GuidString(*d.remote_port_guid) + " given for " + there +
                     ", which has " + GuidString(fabric_.port_guid(far)));
      }
      const PortId a = fabric_.port_id(d.local), z = fabric_.port_id(far);
      if (a == z) return Error("port " + here + " cabled to itself");
      if (a < z) {  // connect once, from the end seen first in port order
        const Status s = fabric_.Connect(d.local, far);
        if (!s.ok()) return Error(s.message());
      }
    }
    return Status::OK();
  }

  const std::string& source_;
  Fabric& fabric_;
  int line_ = 0;
  NodeId current_ = kNoNode;  // the record whose port lines we are reading
  Guid switch_base_ = kIbsimFirstSwitchGuid, switch_next_ = kIbsimFirstSwitchGuid;
  Guid ca_base_ = kIbsimFirstCaGuid, ca_next_ = kIbsimFirstCaGuid;
  std::optional<Guid> pending_switch_port_guid_;  // from "switchguid=X(Y)"
  std::vector<PortDecl> decls_;
  std::vector<int> decl_of_slot_;  // port slot -> index into decls_, -1 if not listed
  std::vector<int> node_line_;     // node -> line of its Switch/Ca record
  std::vector<int> guid_line_;     // port slot -> line that gave its GUID, 0 if a default
  std::unordered_map<Guid, PortId> given_guids_;  // GUIDs the file gives -> their port slot
  std::vector<std::string>* warnings_;
  int diagnostics_ = 0, first_diagnostic_ = 0;
  int unassigned_lids_ = 0, first_unassigned_lid_ = 0;
};

// --- Writer ---

std::string HexGuid(Guid g, bool prefix, bool pad) {
  char buf[24];
  std::snprintf(buf, sizeof buf, pad ? "%s%016llx" : "%s%llx", prefix ? "0x" : "",
                static_cast<unsigned long long>(g));
  return buf;
}

/// The name ibnetdiscover gives a node: "S-<guid>" or "H-<guid>".
std::string DiscoveredName(const Fabric& f, NodeId n) {
  return (f.is_switch(n) ? "S-" : "H-") + HexGuid(f.node_guid(n), false, true);
}

/// The LID a port's peer shows in comments: a switch answers on port 0.
Lid ShownLid(const Fabric& f, PortRef p) {
  return f.is_switch(p.node) ? f.switch_lid(p.node) : f.base_lid(p);
}

/// The rate written for the cable at `p`: what its ends declare, else the fabric's nominal rate,
/// else the option's default. ibsim reads it back ("lid N 4xEDR" at the end of the comment) and
/// trains the simulated link to it, so what we hand ibsim has the source's degraded links.
class RateText {
 public:
  RateText(const Fabric& f, const TopologyWriteOptions& opt)
      : f_(f),
        fallback_(f.nominal_rate().declared() ? LinkRateString(f.nominal_rate()) : opt.link_speed) {
  }
  std::string operator()(PortRef p) const {
    const LinkRate r = f_.link_rate(f_.port_id(p));
    return r.declared() ? LinkRateString(r) : fallback_;
  }

 private:
  const Fabric& f_;
  std::string fallback_;
};

void FormatIbsim(const Fabric& f, const TopologyWriteOptions& opt, std::string* out) {
  const RateText rate(f, opt);
  Guid switch_next = kIbsimFirstSwitchGuid, ca_next = kIbsimFirstCaGuid;
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    const Guid guid = f.node_guid(n);
    const std::string q = "\"";
    if (f.is_switch(n)) {
      // ibsim takes GUIDs from a counter; only reset it where it would go wrong.
      if (guid != switch_next) *out += "switchguid=" + HexGuid(guid, true, true) + "\n";
      switch_next = guid + 1;
      *out += "Switch\t" + std::to_string(f.num_ports(n)) + " " + q + f.name(n) + q + "\t# " + q +
              f.description(n) + q + " enhanced port 0 lid " + std::to_string(f.switch_lid(n)) +
              " lmc " + std::to_string(f.lmc({n, 0})) + "\n";
    } else {
      if (guid != ca_next) *out += "caguid=" + HexGuid(guid, true, true) + "\n";
      ca_next = guid + static_cast<Guid>(f.num_ports(n)) + 1;
      *out += "Hca\t" + std::to_string(f.num_ports(n)) + " " + q + f.name(n) + q + "\t# " + q +
              f.description(n) + q + "\n";
    }
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const PortRef peer = f.peer({n, p});
      if (!peer.valid()) continue;
      *out += "[" + std::to_string(p) + "]\t" + q + f.name(peer.node) + q + "[" +
              std::to_string(peer.port) + "]\t# ";
      if (!f.is_switch(n)) {
        *out += "lid " + std::to_string(f.base_lid({n, p})) + " lmc " +
                std::to_string(f.lmc({n, p})) + " ";
      }
      *out += q + f.description(peer.node) + q + " lid " + std::to_string(ShownLid(f, peer)) + " " +
              rate({n, p}) + "\n";
    }
    *out += "\n";
  }
}

void FormatIbnetdiscover(const Fabric& f, const TopologyWriteOptions& opt, std::string* out) {
  const RateText rate(f, opt);
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    const Guid guid = f.node_guid(n);
    const std::string q = "\"";
    *out += "vendid=0x0\ndevid=0x0\nsysimgguid=" + HexGuid(guid, true, false) + "\n";
    if (f.is_switch(n)) {
      *out += "switchguid=" + HexGuid(guid, true, false) + "(" +
              HexGuid(f.port_guid({n, 0}), false, false) + ")\n";
      *out += "Switch\t" + std::to_string(f.num_ports(n)) + " " + q + DiscoveredName(f, n) + q +
              "\t\t# " + q + f.description(n) + q + " enhanced port 0 lid " +
              std::to_string(f.switch_lid(n)) + " lmc " + std::to_string(f.lmc({n, 0})) + "\n";
    } else {
      *out += "caguid=" + HexGuid(guid, true, false) + "\n";
      *out += "Ca\t" + std::to_string(f.num_ports(n)) + " " + q + DiscoveredName(f, n) + q +
              "\t\t# " + q + f.description(n) + q + "\n";
    }
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const PortRef peer = f.peer({n, p});
      if (!peer.valid()) continue;
      const std::string remote =
          q + DiscoveredName(f, peer.node) + q + "[" + std::to_string(peer.port) + "]";
      const std::string shown = q + f.description(peer.node) + q + " lid " +
                                std::to_string(ShownLid(f, peer)) + " " + rate({n, p}) + "\n";
      if (f.is_switch(n)) {
        *out += "[" + std::to_string(p) + "]\t" + remote;
        if (!f.is_switch(peer.node)) *out += "(" + HexGuid(f.port_guid(peer), false, false) + ") ";
        *out += "\t\t# " + shown;
      } else {
        *out += "[" + std::to_string(p) + "](" + HexGuid(f.port_guid({n, p}), false, false) +
                ") \t" + remote + "\t\t# lid " + std::to_string(f.base_lid({n, p})) + " lmc " +
                std::to_string(f.lmc({n, p})) + " " + shown;
      }
    }
    *out += "\n";
  }
}

}  // namespace

Status ParseTopology(std::string_view text, const std::string& source, Fabric* out,
                     std::vector<std::string>* warnings) {
  if (out->num_nodes() != 0) return Status::InvalidArgument("ParseTopology needs an empty Fabric");
  TopologyParser parser(source, out, warnings);
  return parser.Parse(text);
}

Status ReadTopology(const std::string& path, Fabric* out, std::vector<std::string>* warnings) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseTopology(text, path, out, warnings);
}

std::string FormatTopology(const Fabric& fabric, const TopologyWriteOptions& options) {
  std::string out = "# Topology written by sar (ibnetdiscover format, ";
  out += options.style == TopologyStyle::kIbsim ? "ibsim style)\n\n" : "ibnetdiscover style)\n\n";
  if (options.style == TopologyStyle::kIbsim) {
    FormatIbsim(fabric, options, &out);
  } else {
    FormatIbnetdiscover(fabric, options, &out);
  }
  return out;
}

Status WriteTopology(const std::string& path, const Fabric& fabric,
                     const TopologyWriteOptions& options) {
  return WriteFileAtomic(path, FormatTopology(fabric, options));
}

Fabric WithIbsimPortGuids(const Fabric& fabric) {
  Fabric sim = fabric;
  for (NodeId n = 0; n < sim.num_nodes(); ++n) {
    if (sim.is_switch(n)) continue;
    for (int p = 1; p <= sim.num_ports(n); ++p) sim.set_port_guid({n, p}, sim.node_guid(n) + p);
  }
  return sim;
}

}  // namespace sar
