// FORS on a real fabric: the FT(2;M0,M1) with its failed links removed, LMC LIDs (one LID per
// spine for every HCA), leaf tables that send LID offset k up to spine k, and the per-phase table
// the application reads (which destination LID each transfer uses).
//
// Fabric: GenerateFatTree2 (hosts h%05d = server s, leaves leaf%03d, spines spine%03d; leaf port
// i+1 goes to its i-th host, leaf port M0+1+k to spine k, spine port l+1 to leaf l), minus the
// failed cables, LIDs by AssignLids with lmc = ForsLmc(M0).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "sar/fors/fors.h"
#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

/// ceil(log2 m0): enough LIDs per HCA to name every spine.
int ForsLmc(int m0);

/// The fabric the tables are for (see above).
Status BuildForsFabric(int m0, int m1, const std::vector<FailedLink>& failed, Fabric* out);

/// Complete tables for `fabric` (made by BuildForsFabric with the same failures). Host LIDs: a
/// leaf delivers its own hosts' LIDs down; for another leaf's host, LID offset k goes up to
/// spine k' = k mod M0 if the cable from this leaf and the cable to the destination leaf both
/// work, else to the next spine after k' (cyclically) that works at both ends. Spines route each
/// host LID down to its leaf (no entry where that cable failed: no leaf sends such a LID there).
/// Switch LIDs: min-hop, lowest port first. Fails if two leaves share no working spine.
Status BuildForsLfts(const Fabric& fabric, int m0, int m1, const std::vector<FailedLink>& failed,
                     LftSet* out);

/// The destination LID a transfer uses: base LID + spine (base LID for intra-leaf transfers).
Lid ForsDestinationLid(const Fabric& fabric, const Transfer& t);

/// "phase,src,dst,dlid" CSV (see docs/fors.md): the application's per-phase LID table.
std::string FormatForsLidTable(const Fabric& fabric, const ForsPlan& plan);

/// Traces every transfer of every phase through `lfts` (RouteTracer, from the tables alone) and
/// fails on the first undelivered route or on a channel used twice within one phase.
Status CheckPhasesOnTables(const Fabric& fabric, const LftSet& lfts, const ForsPlan& plan);

}  // namespace sar
