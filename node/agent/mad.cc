#include "mad.h"

#include <cstring>

namespace sarmig {
namespace {

void Put(uint8_t* p, uint64_t v, int bytes) { sar_mig_put(p, v, bytes); }
uint64_t Get(const uint8_t* p, int bytes) { return sar_mig_get(p, bytes); }

// Common header: BaseVersion 1, class, class version, method, status 0, TID, attribute.
void PutHeader(Mad* mad, uint8_t mgmt_class, uint8_t class_version, uint8_t method, uint64_t tid,
               uint16_t attr_id, uint32_t attr_mod) {
  uint8_t* p = mad->data();
  p[0] = 1;
  p[1] = mgmt_class;
  p[2] = class_version;
  p[3] = method;
  Put(p + 8, tid, 8);
  Put(p + 16, attr_id, 2);
  Put(p + 20, attr_mod, 4);
}

bool IsSmpClass(uint8_t c) { return c == kClassSmpLid || c == kClassSmpDr; }

// A response to an SMP request: GetResp, same TID and attribute; for a directed-route SMP the
// direction bit goes up and the paths stay as ibsim (or the kernel) left them.
Mad SmpResponse(const Mad& request, uint16_t status) {
  Mad out = request;
  out[3] = kMethodGetResp;
  if (request[1] == kClassSmpDr) {
    Put(out.data() + 4, 0x8000u | (status & 0x7FFFu), 2);
  } else {
    Put(out.data() + 4, status, 2);
  }
  return out;
}

}  // namespace

MadHeader ParseHeader(const Mad& mad) {
  MadHeader h;
  h.base_version = mad[0];
  h.mgmt_class = mad[1];
  h.class_version = mad[2];
  h.method = mad[3];
  h.status = static_cast<uint16_t>(Get(mad.data() + 4, 2));
  h.tid = Get(mad.data() + 8, 8);
  h.attr_id = static_cast<uint16_t>(Get(mad.data() + 16, 2));
  h.attr_mod = static_cast<uint32_t>(Get(mad.data() + 20, 4));
  return h;
}

Mad BuildInformInfoSet(uint64_t tid, const Subscription& sub) {
  Mad mad{};
  PutHeader(&mad, kClassSa, 2, kMethodSet, tid, kAttrInformInfo, 0);
  uint8_t* ii = mad.data() + kSaDataOffset;
  // GID 0 (bytes 0..15): the subscriber is the sending port.
  Put(ii + 16, 0xFFFF, 2);  // LIDRangeBegin: all
  Put(ii + 18, 0, 2);       // LIDRangeEnd
  ii[22] = 1;               // IsGeneric
  ii[23] = sub.subscribe ? 1 : 0;
  Put(ii + 24, 0xFFFF, 2);  // Type: all
  Put(ii + 26, sub.trap_number, 2);
  Put(ii + 28, (1u << 8) | 18u, 4);  // QPN 1, RespTimeValue 18
  Put(ii + 33, 0xFFFFFF, 3);         // ProducerType: all
  return mad;
}

bool ParseReport(const Mad& mad, Notice* n, std::string* why) {
  MadHeader h = ParseHeader(mad);
  if (h.base_version != 1 || h.mgmt_class != kClassSa) {
    *why = "not a SubnAdm MAD";
    return false;
  }
  if (h.method != kMethodReport) {
    *why = "not a Report";
    return false;
  }
  if (h.attr_id != kAttrNotice) {
    *why = "Report of attribute " + std::to_string(h.attr_id) + ", not Notice";
    return false;
  }
  const uint8_t* p = mad.data() + kSaDataOffset;
  n->is_generic = (p[0] & 0x80) != 0;
  n->type = p[0] & 0x7F;
  n->producer_or_vendor = static_cast<uint32_t>(Get(p + 1, 3));
  n->trap_or_device = static_cast<uint16_t>(Get(p + 4, 2));
  n->issuer_lid = static_cast<uint16_t>(Get(p + 6, 2));
  std::memcpy(n->details.data(), p + kNoticeDataDetails, SAR_MIG_DATA_SIZE);
  n->issuer_guid = Get(p + kNoticeIssuerGid + 8, 8);
  return true;
}

Mad BuildReportResp(const Mad& report) {
  Mad out = report;
  out[3] = kMethodReportResp;
  Put(out.data() + 4, 0, 2);
  return out;
}

Mad BuildAckTrap(uint64_t tid, uint16_t issuer_lid, const std::array<uint8_t, 16>& port_gid,
                 const sar_mig_msg_t& msg) {
  Mad mad{};
  PutHeader(&mad, kClassSmpLid, 1, kMethodTrap, tid, kAttrNotice, 0);
  uint8_t* n = mad.data() + kSmpDataOffset;
  n[0] = 0x04;  // IsGeneric 0, type 4 (informational)
  Put(n + 1, SAR_MIG_VENDOR_ID, 3);
  Put(n + 4, SAR_MIG_DEVICE_ID, 2);
  Put(n + 6, issuer_lid, 2);
  sar_mig_encode(&msg, n + kNoticeDataDetails);
  std::memcpy(n + kNoticeIssuerGid, port_gid.data(), 16);
  return mad;
}

bool ParseAckTrap(const Mad& mad, sar_mig_msg_t* msg) {
  MadHeader h = ParseHeader(mad);
  if (h.mgmt_class != kClassSmpLid || h.method != kMethodTrap || h.attr_id != kAttrNotice)
    return false;
  const uint8_t* n = mad.data() + kSmpDataOffset;
  if (n[0] != 0x04 || Get(n + 1, 3) != SAR_MIG_VENDOR_ID || Get(n + 4, 2) != SAR_MIG_DEVICE_ID)
    return false;
  return sar_mig_decode(n + kNoticeDataDetails, msg) == 0;
}

Mad BuildSmInfoResp(const Mad& request, uint64_t port_guid) {
  Mad out = SmpResponse(request, 0);
  uint8_t* d = out.data() + kSmpDataOffset;
  std::memset(d, 0, 64);
  Put(d, port_guid, 8);  // GUID
  // SM_Key 0, ActCount 0; priority 0 (high nibble), SMState 0 = NOT-ACTIVE (low nibble).
  d[20] = 0;
  return out;
}

Mad BuildSmpUnsupportedResp(const Mad& request) {
  // Status bits 2..4 = 3: "method/attribute combination not supported".
  return SmpResponse(request, 0x000C);
}

Mad BuildSmInfoGet(uint64_t tid) {
  Mad mad{};
  PutHeader(&mad, kClassSmpLid, 1, kMethodGet, tid, kAttrSmInfo, 0);
  return mad;
}

bool ParseSmInfoResp(const Mad& mad, uint64_t* guid) {
  MadHeader h = ParseHeader(mad);
  if (!IsSmpClass(h.mgmt_class) || h.method != kMethodGetResp || h.attr_id != kAttrSmInfo)
    return false;
  if ((h.status & 0x7FFF) != 0) return false;
  *guid = Get(mad.data() + kSmpDataOffset, 8);
  return true;
}

Mad BuildGenericTrap(uint64_t tid, uint16_t trap_number, uint16_t issuer_lid,
                     const uint8_t* details) {
  Mad mad{};
  PutHeader(&mad, kClassSmpLid, 1, kMethodTrap, tid, kAttrNotice, 0);
  uint8_t* n = mad.data() + kSmpDataOffset;
  n[0] = 0x83;       // generic, type 3
  Put(n + 1, 4, 3);  // producer: class manager
  Put(n + 4, trap_number, 2);
  Put(n + 6, issuer_lid, 2);
  std::memcpy(n + kNoticeDataDetails, details, SAR_MIG_DATA_SIZE);
  return mad;
}

Mad BuildLocalPortInfoGet(uint64_t tid, uint8_t port_num) {
  Mad mad{};
  PutHeader(&mad, kClassSmpDr, 1, kMethodGet, tid, kAttrPortInfo, port_num);
  mad[6] = 0;                       // hop pointer
  mad[7] = 0;                       // hop count: this port
  Put(mad.data() + 32, 0xFFFF, 2);  // DrSLID: permissive
  Put(mad.data() + 34, 0xFFFF, 2);  // DrDLID: permissive
  return mad;
}

bool ParsePortInfoResp(const Mad& mad, PortInfo* info) {
  MadHeader h = ParseHeader(mad);
  if (!IsSmpClass(h.mgmt_class) || h.method != kMethodGetResp || h.attr_id != kAttrPortInfo)
    return false;
  if ((h.status & 0x7FFF) != 0) return false;
  const uint8_t* d = mad.data() + kSmpDataOffset;
  info->gid_prefix = Get(d + 8, 8);
  info->lid = static_cast<uint16_t>(Get(d + 16, 2));
  info->sm_lid = static_cast<uint16_t>(Get(d + 18, 2));
  info->port_state = d[32] & 0x0F;  // LinkSpeedSupported | PortState
  info->lmc = d[34] & 0x07;         // M_KeyProtectBits | reserved | LMC
  return true;
}

}  // namespace sarmig
