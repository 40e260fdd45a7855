#include "sar/model/node_classes.h"

#include <unordered_map>
#include <unordered_set>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

std::string_view FirstWord(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  text.remove_prefix(start);
  return text.substr(0, text.find_first_of(" \t"));
}

bool IsAggregationNodeDescription(std::string_view description) {
  return description.find("Aggregation Node") != std::string_view::npos;
}

bool IsNamelessDescription(std::string_view description) {
  const std::string_view word = FirstWord(description);
  if (word.empty()) return true;
  if (word.size() < 3 || word[0] != 'M' || word[1] != 'T') return false;
  for (char c : word.substr(2)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::string NamelessHostName(Guid node_guid) {
  return "H-" + GuidString(node_guid).substr(2);  // GuidString: "0x" + 16 hex digits
}

NodeClassCounts CountNodeClasses(const Fabric& fabric) {
  NodeClassCounts c;
  std::unordered_set<std::string_view> hosts;
  for (NodeId h : fabric.hcas()) {
    if (fabric.is_aggregation_node(h)) {
      ++c.aggregation_nodes;
      continue;
    }
    ++c.host_hcas;
    c.nameless_hcas += IsNamelessDescription(fabric.description(h));
    hosts.insert(fabric.hostname(h));
  }
  c.hosts = static_cast<int>(hosts.size());
  return c;
}

Status ReadGuidFile(const std::string& path, std::vector<Guid>* guids, size_t max_bytes) {
  std::string text;
  FileInfo info;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, UntrustedInputOptions(max_bytes), &text, &info));
  const io::Echo echo = info.may_quote() ? io::Echo::kQuote : io::Echo::kHide;
  std::vector<Guid> result;
  io::LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const std::vector<std::string_view> words = io::SplitWords(io::StripComment(line));
    if (words.empty()) continue;
    uint64_t guid = 0;
    // OpenSM's cn_guid_file takes "0x..." or bare hex; a bare token is always hex here too.
    std::string_view token = words[0];
    if (token.size() > 2 && token[0] == '0' && (token[1] == 'x' || token[1] == 'X')) {
      token.remove_prefix(2);
    }
    if (words.size() != 1 || !io::ParseHexDigits(token, &guid) || guid == 0) {
      return io::ExpectedAt(path, lines.line_number(), "one GUID (hex) per line", io::Trim(line),
                            echo);
    }
    result.push_back(guid);
  }
  *guids = std::move(result);
  return Status::OK();
}

Status MakeNodeClasses(const Fabric& fabric, const std::vector<Guid>* cn,
                       const std::vector<Guid>* io, NodeClasses* out,
                       std::vector<std::string>* unknown) {
  // Each GUID to the HCA it names (node GUID or any port GUID); kNoNode if none.
  auto hca_of = [&fabric](Guid g) {
    NodeId n = fabric.FindByNodeGuid(g);
    if (n == kNoNode) n = fabric.FindByPortGuid(g).node;
    return n != kNoNode && !fabric.is_switch(n) ? n : kNoNode;
  };
  std::unordered_set<Guid> reported;
  auto mark = [&](const std::vector<Guid>& list, std::vector<uint8_t>* in_list) {
    in_list->assign(fabric.num_nodes(), 0);
    for (Guid g : list) {
      const NodeId n = hca_of(g);
      if (n != kNoNode) {
        (*in_list)[n] = 1;
      } else if (unknown != nullptr && reported.insert(g).second) {
        unknown->push_back(GuidString(g));
      }
    }
  };
  std::vector<uint8_t> in_cn, in_io;
  if (cn != nullptr) mark(*cn, &in_cn);
  if (io != nullptr) mark(*io, &in_io);

  NodeClasses result;
  result.of_node.assign(fabric.num_nodes(), NodeClass::kOther);
  for (NodeId h : fabric.hcas()) {
    const bool storage = io != nullptr && in_io[h];
    const bool compute = cn != nullptr && in_cn[h];
    if (storage && compute) {
      return Status::InvalidArgument("HCA '" + fabric.name(h) + "' (" +
                                     GuidString(fabric.node_guid(h)) +
                                     ") is listed as both compute and storage");
    }
    if (storage) {
      result.of_node[h] = NodeClass::kStorage;
    } else if (compute || cn == nullptr) {
      result.of_node[h] = NodeClass::kCompute;
    }
  }
  *out = std::move(result);
  return Status::OK();
}

}  // namespace sar
