// Routing tables: what every switch forwards each destination LID to.
//
// LftSet holds one linear forwarding table per switch of a Fabric, indexed by the fabric's
// switch_index(), as a flat array of output port numbers (0 = the switch itself, kNoRoute = no
// entry). VirtualLayers optionally says which virtual layer (service level) each route uses.
// Thread-safety: a plain value; concurrent reads are fine.
#pragma once

#include <cstdint>
#include <vector>

#include "sar/fabric.h"

namespace sar {

class LftSet {
 public:
  static constexpr uint8_t kNoRoute = 0xFF;

  LftSet() = default;
  /// Empty tables (all kNoRoute) for `num_switches` switches and LIDs 0..max_lid.
  LftSet(int num_switches, Lid max_lid);
  /// Empty tables sized for every switch and LID of `fabric`.
  explicit LftSet(const Fabric& fabric) : LftSet(fabric.num_switches(), fabric.max_lid()) {}

  int num_switches() const { return num_switches_; }
  Lid max_lid() const { return max_lid_; }
  uint8_t port(int switch_index, Lid lid) const {
    return lid > max_lid_ ? kNoRoute : ports_[Offset(switch_index) + lid];
  }
  /// REQUIRES: lid <= max_lid().
  void set_port(int switch_index, Lid lid, uint8_t port) {
    ports_[Offset(switch_index) + lid] = port;
  }
  /// The table of one switch: max_lid()+1 entries.
  const uint8_t* row(int switch_index) const { return ports_.data() + Offset(switch_index); }
  uint8_t* mutable_row(int switch_index) { return ports_.data() + Offset(switch_index); }

  /// OK if these tables were made for `fabric` (one table per switch); the analyses check this
  /// before indexing by switch.
  Status CheckFits(const Fabric& fabric) const;

  friend bool operator==(const LftSet&, const LftSet&) = default;

 private:
  size_t Offset(int switch_index) const {
    return static_cast<size_t>(switch_index) * (max_lid_ + 1);
  }
  int num_switches_ = 0;
  Lid max_lid_ = 0;
  std::vector<uint8_t> ports_;
};

/// How much a switch would be sent to go from `before` to `after`: entries that differ, and LFT
/// blocks that differ (64 LIDs each, the unit of an SMP Set(LinearForwardingTable), which is
/// what OpenSM sends per changed block). Tables of other shapes count every entry and block.
struct LftChanges {
  uint64_t entries = 0;
  uint64_t blocks = 0;
};
constexpr int kLftBlockLids = 64;
LftChanges CountLftChanges(const LftSet& before, const LftSet& after);

/// The virtual layer (0..15) of each route, keyed by (source LID, destination LID). Routes not
/// listed use default_layer. Engines that need no layers leave this empty.
/// Stored as one dense row per source LID (destination LID -> layer), because engines set a
/// layer for nearly every endpoint pair and the deadlock check reads them in its inner loop.
class VirtualLayers {
 public:
  int default_layer = 0;
  /// REQUIRES: 0 <= layer <= 15.
  void set(Lid src, Lid dst, int layer);
  /// Marks "no layer listed" in a row given to SetRow.
  static constexpr uint8_t kUnlisted = 0xFF;
  /// Replaces source `src`'s whole row: row[dst] is the layer (0..15) of (src, dst) or kUnlisted.
  /// The same as set() per listed entry on an empty row, for fills of a whole row at a time (one
  /// call per source LID instead of one per endpoint pair).
  void SetRow(Lid src, std::vector<uint8_t> row);
  int get(Lid src, Lid dst) const {
    if (src >= rows_.size() || dst >= rows_[src].size()) return default_layer;
    const uint8_t v = rows_[src][dst];
    return v == kUnlisted ? default_layer : v;
  }
  /// Copies the layers of every source LID 0..num_src-1 to the destination LIDs
  /// dst_first..dst_first+count-1, row by row: out[src * count + k] = get(src, dst_first + k)
  /// (out holds num_src * count bytes). The deadlock check needs all sources of a destination
  /// (a column: a cache miss per source LID read one by one); a few neighbouring columns read
  /// at once share each row's cache line.
  void CopyColumns(Lid dst_first, Lid count, Lid num_src, uint8_t* out) const;
  /// Highest layer used + 1 (default_layer included).
  int num_layers() const;
  /// Number of listed routes.
  size_t size() const { return size_; }
  struct Entry {
    Lid src, dst;
    int layer;
  };
  /// Every listed route, sorted by (src, dst).
  std::vector<Entry> Entries() const;
  /// Calls f(Entry) for every listed route in (src, dst) order without copying them all first
  /// (an LMC 7 fabric lists billions: Entries() alone would need tens of GB).
  template <class F>
  void ForEachEntry(F&& f) const {
    for (Lid src = 0; src < rows_.size(); ++src) {
      const std::vector<uint8_t>& row = rows_[src];
      for (Lid dst = 0; dst < row.size(); ++dst) {
        if (row[dst] != kUnlisted) f(Entry{src, dst, row[dst]});
      }
    }
  }

 private:
  std::vector<std::vector<uint8_t>> rows_;  // [src][dst], kUnlisted = not listed
  size_t size_ = 0;
};

}  // namespace sar
