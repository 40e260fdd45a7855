// Route tracing from the forwarding tables themselves (never from an engine's internal paths).
//
// Destination-based routing makes the routes towards one destination LID a functional graph
// over the switches: each switch forwards to one port. RouteTracer builds that graph per
// destination once (O(switches)), classifies every switch (delivers, loops, hits a hole, is
// misdelivered), and gives hop counts; a source's route is the walk from its leaf switch.
// Thread-safety: a RouteTracer is immutable after construction; DestinationTree is per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

enum class RouteFate : uint8_t {
  kDelivered,     // reaches the port owning the destination LID
  kLoop,          // revisits a switch
  kHole,          // no LFT entry, or the entry names an uncabled / nonexistent port
  kMisdelivered,  // leaves the switch fabric at a port that does not own the LID
};

/// The routes of all switches towards one destination LID.
struct DestinationTree {
  Lid lid = 0;
  std::vector<RouteFate> fate;  // per switch index
  std::vector<uint16_t> hops;   // per switch index: cables from that switch to the destination
                                // node (delivered switches only)
  std::vector<PortId> out;      // per switch index: channel taken (kNoPort if none / own LID)
  // Where out[s] != kNoPort, the same channel as read by the CDG walk, so that it needs no
  // lookup per channel: its port number on switch s and RouteTracer::next_switch(out[s]).
  // Unspecified elsewhere.
  std::vector<uint8_t> port;
  std::vector<int32_t> next;
};

/// The LFT entries of every switch for one aligned block of kLids consecutive LIDs, transposed
/// (one LID's entries for all switches together), with the switch each entry's port leads to.
/// A destination's walk reads one entry from each of ~a thousand switch rows (a table row apart)
/// and the neighbour behind that port (a table per port slot): read per LID, each is a cache
/// miss per switch on a large fabric. Loaded once per block (RouteTracer::LoadColumns), each
/// row's cache line and each switch's ports are read once for all kLids LIDs. LIDs past the
/// tables' max_lid read as kNoRoute. Thread-safety: a plain value; one per worker.
class LftColumns {
 public:
  static constexpr Lid kLids = 64;  // one cache line of a row
  /// The block holding `lid`.
  static Lid BlockOf(Lid lid) { return lid / kLids; }
  /// Whether a fabric of `num_switches` switches fits (neighbours are stored in 16 bits).
  static bool Fits(int num_switches) { return num_switches <= 0x7FFF; }
  bool Holds(Lid lid) const { return loaded_ && BlockOf(lid) == block_; }

 private:
  friend class RouteTracer;
  bool loaded_ = false;
  Lid block_ = 0;
  int num_switches_ = 0;
  std::vector<uint8_t> port_;  // [lid % kLids][switch index]: the LFT entry
  std::vector<int16_t> next_;  // the same: RouteTracer::next_switch of that port (valid ports)
};

class RouteTracer {
 public:
  RouteTracer(const Fabric& fabric, const LftSet& lfts);
  /// Fills *tree for destination `lid`. O(number of switches).
  void Build(Lid lid, DestinationTree* tree) const;
  /// The same for the switches a route from one of `from` (switch indices) crosses; every other
  /// switch is left as if it had no entry (kHole, hops 0, kNoPort). Equal to Build on every
  /// switch it classifies. The analyses trace routes from the switches with endpoints only, and
  /// in a fat-tree the routes towards one LID converge on few upper switches: this reads a
  /// fraction of the LFT column that Build reads. O(switches reached) after an O(switches) reset.
  void BuildFrom(Lid lid, const std::vector<int>& from, DestinationTree* tree) const;
  /// The same, reading the entries from `columns`. REQUIRES: columns.Holds(lid), loaded by
  /// this tracer. Equal to BuildFrom(lid, from, tree).
  void BuildFrom(Lid lid, const std::vector<int>& from, const LftColumns& columns,
                 DestinationTree* tree) const;
  /// Fills *columns with block `block` (LftColumns::BlockOf) of this tracer's tables.
  /// REQUIRES: LftColumns::Fits(number of switches).
  void LoadColumns(Lid block, LftColumns* columns) const;
  /// The channels a packet from `src` (an HCA port) to `lid` crosses, in order, starting with the
  /// HCA's own uplink; *fate says how it ended. A loop ends with the channel that re-enters a
  /// switch already visited; a hole ends before the missing channel.
  std::vector<PortId> Path(PortRef src, Lid lid, RouteFate* fate) const;

  static constexpr int32_t kToHca = -1;    // next_switch(): the channel ends at an HCA
  static constexpr int32_t kNowhere = -2;  // next_switch(): the port is not cabled
  /// The switch index that `channel` leads to, or kToHca / kNowhere.
  int32_t next_switch(PortId channel) const { return next_switch_[channel]; }

 private:
  template <class Entry, class Next>
  void BuildImpl(Lid lid, const std::vector<int>* from, Entry entry, Next next_of,
                 DestinationTree* tree) const;

  const Fabric& fabric_;
  const LftSet& lfts_;
  std::vector<int32_t> next_switch_;  // per port slot, precomputed: Build() is the hot loop
  // Per switch index: the port slot of its port 0 and its number of ports (Fabric's per node).
  std::vector<PortId> port0_;
  std::vector<int> ports_;
};

}  // namespace sar
