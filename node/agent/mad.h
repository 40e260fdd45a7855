// The MADs the node agent sends and receives, as plain byte arrays (no I/O, no allocation):
// InformInfo subscriptions to the SA, Reports and their ReportResp, the vendor Trap SMP that
// carries an acknowledgement, SMInfo answers (ibsim test mode) and the local PortInfo query that
// tells the agent its LID and the SM's LID. Layouts from IBA vol. 1 chapters 13-15; offsets
// below are into the 256-byte MAD. Multi-byte fields are big-endian.
#ifndef SAR_AGENT_MAD_H_
#define SAR_AGENT_MAD_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "sar/migration/migration_wire.h"

namespace sarmig {

constexpr size_t kMadSize = 256;
using Mad = std::array<uint8_t, kMadSize>;

constexpr uint8_t kClassSmpLid = 0x01;
constexpr uint8_t kClassSa = 0x03;
constexpr uint8_t kClassSmpDr = 0x81;

constexpr uint8_t kMethodGet = 0x01;
constexpr uint8_t kMethodSet = 0x02;
constexpr uint8_t kMethodGetResp = 0x81;
constexpr uint8_t kMethodTrap = 0x05;
constexpr uint8_t kMethodReport = 0x06;
constexpr uint8_t kMethodReportResp = 0x86;
constexpr uint8_t kMethodTrapRepress = 0x07;

constexpr uint16_t kAttrNotice = 0x0002;
constexpr uint16_t kAttrInformInfo = 0x0003;
constexpr uint16_t kAttrSmInfo = 0x0020;
constexpr uint16_t kAttrPortInfo = 0x0015;

constexpr uint32_t kSaQkey = 0x80010000u;
constexpr size_t kSaDataOffset = 56;       // SA MADs: after the RMPP header, SM_Key, offsets, mask
constexpr size_t kSmpDataOffset = 64;      // SMPs (LID-routed and directed-route)
constexpr size_t kNoticeDataDetails = 10;  // DataDetails inside the 80-byte Notice
constexpr size_t kNoticeIssuerGid = 64;

/// The common MAD header fields the agent looks at.
struct MadHeader {
  uint8_t base_version = 0;
  uint8_t mgmt_class = 0;
  uint8_t class_version = 0;
  uint8_t method = 0;  // with the response bit (0x80)
  uint16_t status = 0;
  uint64_t tid = 0;
  uint16_t attr_id = 0;
  uint32_t attr_mod = 0;
};

MadHeader ParseHeader(const Mad& mad);

/// Which record of the two the agent keeps with the SA.
struct Subscription {
  uint16_t trap_number = 0;
  bool subscribe = true;
};

/// SubnAdm Set(InformInfo): subscribe (or unsubscribe) this port to generic trap `trap` from
/// any producer (LID range 0xFFFF..0, ProducerType 0xFFFFFF), reports to QP1, RespTimeValue 18.
/// Unsubscribing repeats the same QPN/RespTimeValue word (OpenSM rejects it otherwise).
Mad BuildInformInfoSet(uint64_t tid, const Subscription& sub);

/// The parts of a Report(Notice) the agent checks.
struct Notice {
  bool is_generic = false;
  uint8_t type = 0;
  uint32_t producer_or_vendor = 0;  // 24 bits
  uint16_t trap_or_device = 0;
  uint16_t issuer_lid = 0;
  std::array<uint8_t, SAR_MIG_DATA_SIZE> details{};
  uint64_t issuer_guid = 0;  // interface id of IssuerGID: OpenSM sets it to the trap sender's
};

/// Reads the Notice of an SA Report (class 0x03, method 0x06, attribute Notice). False (with a
/// reason) if the MAD is not such a Report.
bool ParseReport(const Mad& mad, Notice* notice, std::string* why);

/// The ReportResp for `report`: same TID and attribute, method 0x86, status 0.
Mad BuildReportResp(const Mad& report);

/// The agent's acknowledgement: a Trap SMP (class 0x01, method 0x05, attribute Notice) holding a
/// vendor notice (IsGeneric 0, type 4, SAR_MIG_VENDOR_ID/SAR_MIG_DEVICE_ID) with `msg` encoded
/// into DataDetails. `issuer_lid` and `port_gid` name this port (OpenSM overwrites the GID with
/// the sender's, which is what the coordinator trusts).
Mad BuildAckTrap(uint64_t tid, uint16_t issuer_lid, const std::array<uint8_t, 16>& port_gid,
                 const sar_mig_msg_t& msg);

/// Reads back what BuildAckTrap wrote (for tests and for the integration test's own checks).
bool ParseAckTrap(const Mad& mad, sar_mig_msg_t* msg);

/// GetResp(SMInfo) for a request forwarded by ibsim to the port's issm client: this port is an SM
/// that is NOT-ACTIVE with priority 0, so OpenSM stays master and leaves it alone. Keeps the
/// request's TID, hop fields and return path (directed route: sets the direction bit).
Mad BuildSmInfoResp(const Mad& request, uint64_t port_guid);

/// GetResp with status "unsupported method/attribute" for any other SMP request that reaches
/// the agent in test mode: an unanswered request would stall OpenSM's sweep under ibsim.
Mad BuildSmpUnsupportedResp(const Mad& request);

/// LID-routed Get(SMInfo) to the SM: its answer names the SM's port GUID, which every genuine
/// UnPath/RePath carries as IssuerGID (OpenSM forwards any node's trap 68/69 to the subscribers,
/// but with the sender's GUID there).
Mad BuildSmInfoGet(uint64_t tid);

/// The GUID in a GetResp(SMInfo); false if `mad` is not one.
bool ParseSmInfoResp(const Mad& mad, uint64_t* guid);

/// A generic notice in a Trap SMP (what a node would send to make OpenSM forward trap
/// `trap_number` to the subscribers). Used by sar-mig-inject and the tests.
Mad BuildGenericTrap(uint64_t tid, uint16_t trap_number, uint16_t issuer_lid,
                     const uint8_t* details);

/// Directed-route Get(PortInfo) with zero hops: the local port answers with its LID, its SM's
/// LID and its GID prefix.
Mad BuildLocalPortInfoGet(uint64_t tid, uint8_t port_num);

/// What the agent takes from a PortInfo.
struct PortInfo {
  uint64_t gid_prefix = 0;
  uint16_t lid = 0;
  uint16_t sm_lid = 0;
  uint8_t port_state = 0;  // 4 = Active
  uint8_t lmc = 0;
};

bool ParsePortInfoResp(const Mad& mad, PortInfo* info);

/// Low 32 bits of a TID: the kernel (and umad2sim) rewrite the high bits with agent ids, so the
/// agent matches responses on these only.
inline uint32_t TidLow(uint64_t tid) { return static_cast<uint32_t>(tid & 0xFFFFFFFFu); }

}  // namespace sarmig

#endif  // SAR_AGENT_MAD_H_
