// Routing tables: what every switch forwards each destination LID to.
//
// LftSet holds one linear forwarding table per switch of a Fabric, indexed by the fabric's
// switch_index(), as a flat array of output port numbers (0 = the switch itself, kNoRoute = no
// entry). VirtualLayers optionally says which virtual layer (service level) each route uses.
// Thread-safety: a plain value; concurrent reads are fine.
#pragma once

#include <cstdint>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

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
///
/// Two representations behind one API. Dense: one row per source LID (destination LID -> layer),
/// what set() and SetRow() build (files, tests). Factored: what AssignVirtualLayers produces, where
/// every source on one leaf switch shares its routes, so the layer of (src, dst) is
///   base[c] + (src + dst) mod spread[c],  c = layer_class[slot(src)][dst],
/// unless c is kUnlisted or src and dst belong to the same node. That is O(leaf switches x LIDs)
/// bytes instead of O(LIDs^2) (45k hosts: 44 MB instead of 2.1 GB). Reads are the same for both;
/// a mutation of a factored instance first expands it to dense rows.
class VirtualLayers {
 public:
  int default_layer = 0;
  /// REQUIRES: 0 <= layer <= 15.
  void set(Lid src, Lid dst, int layer);
  /// Marks "no layer listed" in a row given to SetRow (and in Factored::layer_class).
  static constexpr uint8_t kUnlisted = 0xFF;
  /// Replaces source `src`'s whole row: row[dst] is the layer (0..15) of (src, dst) or kUnlisted.
  /// The same as set() per listed entry on an empty row, for fills of a whole row at a time (one
  /// call per source LID instead of one per endpoint pair).
  void SetRow(Lid src, std::vector<uint8_t> row);

  /// The factored form's parts. Every LID below `lids` has an entry in source_slot and node.
  struct Factored {
    Lid lids = 0;
    std::vector<int32_t> source_slot;  // per LID: its row of layer_class, -1 = lists nothing
    std::vector<NodeId> node;          // per LID: owner (pairs of one node are unlisted)
    std::vector<uint8_t> layer_class;  // [slot * lids + dst]: class, or kUnlisted
    std::vector<uint8_t> spread;       // per class: 1..15 layers it spreads over
    std::vector<uint8_t> base;         // per class: its first layer; base + spread <= 16
  };
  /// Replaces everything (default_layer kept) with the factored form `f`. InvalidArgument if its
  /// parts do not fit together.
  Status SetFactored(Factored f);
  /// The factored parts, or null when dense.
  const Factored* factored() const { return factored_ ? &f_ : nullptr; }

  int get(Lid src, Lid dst) const {
    if (factored_) return GetFactored(src, dst);
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
  /// A 64-bit digest of the layers as stored (default_layer included): equal layers stored the
  /// same way have equal digests (the delta validation: have the layers changed?).
  uint64_t Digest() const;
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
    if (factored_) {
      for (Lid src = 0; src < f_.lids; ++src) {
        if (row_of_[src] == kNoRow) continue;
        const uint8_t* row = f_.layer_class.data() + row_of_[src];
        const NodeId node = f_.node[src];
        for (Lid dst = 0; dst < f_.lids; ++dst) {
          const uint8_t c = row[dst];
          if (c == kUnlisted || f_.node[dst] == node) continue;
          f(Entry{src, dst, Layer(c, src, dst)});
        }
      }
      return;
    }
    for (Lid src = 0; src < rows_.size(); ++src) {
      const std::vector<uint8_t>& row = rows_[src];
      for (Lid dst = 0; dst < row.size(); ++dst) {
        if (row[dst] != kUnlisted) f(Entry{src, dst, row[dst]});
      }
    }
  }

 private:
  static constexpr uint64_t kNoRow = ~uint64_t{0};
  // Per class: base + (x mod k) with x mod k by Lemire's multiply-only "fastmod" (m = 2^64 / k
  // rounded up, 0 for k = 1): get() runs billions of times in the deadlock check, a division
  // would cost more than the rest of it.
  struct Class {
    uint64_t m = 0;
    uint32_t k = 1;
    int32_t base = 0;
  };
  int Layer(uint8_t c, Lid src, Lid dst) const {
    const Class& cl = class_[c];
    const uint64_t low = cl.m * (uint64_t{src} + dst);
    return cl.base + static_cast<int>((static_cast<unsigned __int128>(low) * cl.k) >> 64);
  }
  int GetFactored(Lid src, Lid dst) const {
    if (src >= f_.lids || dst >= f_.lids || row_of_[src] == kNoRow) return default_layer;
    const uint8_t c = f_.layer_class[row_of_[src] + dst];
    if (c == kUnlisted || f_.node[src] == f_.node[dst]) return default_layer;
    return Layer(c, src, dst);
  }
  void CopyColumnsFactored(Lid dst_first, Lid count, Lid num_src, uint8_t* out) const;
  // Turns a factored instance into dense rows (before a mutation).
  void Expand();

  std::vector<std::vector<uint8_t>> rows_;  // [src][dst], kUnlisted = not listed
  size_t size_ = 0;
  bool factored_ = false;
  Factored f_;
  std::vector<uint64_t> row_of_;  // per LID: source_slot * lids, or kNoRow
  Class class_[16];
  int max_listed_ = -1;  // factored: highest listed layer, -1 if none
};

}  // namespace sar
