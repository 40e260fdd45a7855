#include "sar/model/lids.h"

#include <string>

namespace sar {

namespace {

Status OutOfLids(Lid needed) {
  return Status::InvalidArgument("fabric needs LIDs up to " + std::to_string(needed) +
                                 ", beyond the last unicast LID " + std::to_string(kMaxUnicastLid));
}

// First multiple of `stride` (a power of two) at or above `lid`.
Lid AlignUp(Lid lid, Lid stride) { return (lid + stride - 1) & ~(stride - 1); }

}  // namespace

Status AssignLids(const LidOptions& options, Fabric* fabric) {
  if (options.lmc < 0 || options.lmc > 7) {
    return Status::InvalidArgument("LMC must be 0..7, got " + std::to_string(options.lmc));
  }
  fabric->ClearLids();
  const Lid stride = Lid{1} << options.lmc;
  // 64-bit so the range check cannot wrap on huge fabrics.
  uint64_t next = 1;
  for (const PortRef& port : fabric->Endpoints()) {
    const uint64_t base = AlignUp(static_cast<Lid>(next), stride);
    if (base + stride - 1 > kMaxUnicastLid) return OutOfLids(static_cast<Lid>(base + stride - 1));
    SAR_RETURN_IF_ERROR(fabric->SetLid(port, static_cast<Lid>(base), options.lmc));
    next = base + stride;
  }
  // Switch port 0 takes one LID, packed right after the HCAs: OpenSM with lmc_esp0 FALSE keeps
  // such LIDs from guid2lid unchanged even when they are not aligned to 2^lmc.
  const int switch_lmc = options.lmc_switches ? options.lmc : 0;
  const Lid switch_stride = Lid{1} << switch_lmc;
  for (NodeId sw : fabric->switches()) {
    const uint64_t base = AlignUp(static_cast<Lid>(next), switch_stride);
    if (base + switch_stride - 1 > kMaxUnicastLid) {
      return OutOfLids(static_cast<Lid>(base + switch_stride - 1));
    }
    SAR_RETURN_IF_ERROR(fabric->SetLid({sw, 0}, static_cast<Lid>(base), switch_lmc));
    next = base + switch_stride;
  }
  return Status::OK();
}

}  // namespace sar
