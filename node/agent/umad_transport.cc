#include "umad_transport.h"

#include <endian.h>
#include <fcntl.h>
#include <infiniband/umad.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace sarmig {
namespace {

// Requests we send wait this long for their response in the kernel's MAD layer (it drops
// responses that match no outstanding send); responses go out with no timeout.
constexpr int kRequestTimeoutMs = 1000;

bool IsRequest(uint8_t method) {
  return method == kMethodGet || method == kMethodSet || method == kMethodTrap;
}

}  // namespace

std::unique_ptr<UmadTransport> UmadTransport::Open(const UmadOptions& opt, std::string* err) {
  if (umad_init() < 0) {
    *err = "umad_init failed (is ib_umad loaded?)";
    return nullptr;
  }
  std::unique_ptr<UmadTransport> t(new UmadTransport());
  umad_port_t port{};
  const char* ca = opt.ca.empty() ? nullptr : opt.ca.c_str();
  if (umad_get_port(ca, opt.port, &port) < 0) {
    *err = "no InfiniBand port " + (opt.ca.empty() ? std::string("(any CA)") : opt.ca) + ":" +
           std::to_string(opt.port);
    return nullptr;
  }
  t->ca_name_ = port.ca_name;
  t->port_num_ = port.portnum;
  t->port_guid_ = be64toh(port.port_guid);
  umad_release_port(&port);
  t->portid_ = umad_open_port(t->ca_name_.c_str(), t->port_num_);
  if (t->portid_ < 0) {
    *err = "cannot open " + t->ca_name_ + " port " + std::to_string(t->port_num_) +
           " (permissions on /dev/infiniband/umad*?)";
    return nullptr;
  }
  // SA: unsolicited Reports (method 0x06) are delivered only with the method bit set; on real
  // hardware only one agent per port may hold it (one sar-agent per node).
  long sa_mask[16 / sizeof(long)] = {0};
  sa_mask[kMethodReport / (8 * sizeof(long))] |= 1L << (kMethodReport % (8 * sizeof(long)));
  // SMPs: send-only normally (acks, the local PortInfo query); in the ibsim test mode also
  // Get/Set requests, as OpenSM asks an issm port for its SMInfo.
  long smp_mask[16 / sizeof(long)] = {0};
  smp_mask[0] = (1L << kMethodGet) | (1L << kMethodSet);
  long* smp = opt.ibsim_issm ? smp_mask : nullptr;
  t->agent_smp_ = umad_register(t->portid_, kClassSmpLid, 1, 0, smp);
  t->agent_dr_ = umad_register(t->portid_, kClassSmpDr, 1, 0, smp);
  t->agent_sa_ = umad_register(t->portid_, kClassSa, 2, 0, sa_mask);
  if (t->agent_smp_ < 0 || t->agent_dr_ < 0 || t->agent_sa_ < 0) {
    *err = "cannot register MAD agents on " + t->ca_name_ +
           " (another process holds SubnAdm Reports on this port?)";
    return nullptr;
  }
  if (opt.ibsim_issm) {
    // After the agents: ibsim marks the port IsSM on open and starts forwarding at once.
    char path[256] = {0};
    if (umad_get_issm_path(t->ca_name_.c_str(), t->port_num_, path, sizeof(path)) < 0) {
      *err = "no issm device for " + t->ca_name_;
      return nullptr;
    }
    t->issm_fd_ = open(path, O_RDWR);
    if (t->issm_fd_ < 0) {
      *err = std::string(path) + ": " + strerror(errno);
      return nullptr;
    }
  }
  return t;
}

UmadTransport::~UmadTransport() {
  if (issm_fd_ >= 0) close(issm_fd_);
  if (portid_ >= 0) umad_close_port(portid_);
}

int UmadTransport::AgentFor(uint8_t mgmt_class) const {
  switch (mgmt_class) {
    case kClassSmpLid:
      return agent_smp_;
    case kClassSmpDr:
      return agent_dr_;
    case kClassSa:
      return agent_sa_;
  }
  return -1;
}

bool UmadTransport::Send(const Mad& mad, const MadAddr& to) {
  int agent = AgentFor(mad[1]);
  if (agent < 0) return false;
  std::vector<uint8_t> buf(umad_size() + kMadSize, 0);
  umad_set_addr(buf.data(), to.lid, static_cast<int>(to.qpn), 0, static_cast<int>(to.qkey));
  std::memcpy(umad_get_mad(buf.data()), mad.data(), kMadSize);
  bool request = IsRequest(mad[3]);
  std::lock_guard<std::mutex> lock(send_mu_);
  return umad_send(portid_, agent, buf.data(), static_cast<int>(kMadSize),
                   request ? kRequestTimeoutMs : 0, 0) == 0;
}

int UmadTransport::Recv(MadPacket* out, int timeout_ms) {
  std::vector<uint8_t> buf(umad_size() + kMadSize, 0);
  int len = static_cast<int>(kMadSize);
  int rc = umad_recv(portid_, buf.data(), &len, timeout_ms);
  if (rc < 0) {
    if (rc == -ETIMEDOUT || rc == -EAGAIN || rc == -EWOULDBLOCK || rc == -EINTR) return 0;
    // umad2sim returns odd codes for an empty queue; a real error repeats, so the caller
    // counts them.
    return -1;
  }
  const ib_user_mad_t* u = reinterpret_cast<const ib_user_mad_t*>(buf.data());
  out->status = static_cast<int>(u->status);
  out->from.lid = be16toh(u->addr.lid);
  out->from.qpn = be32toh(u->addr.qpn);
  out->from.qkey = be32toh(u->addr.qkey);
  size_t n = len > 0 && static_cast<size_t>(len) < kMadSize ? static_cast<size_t>(len) : kMadSize;
  out->mad.fill(0);
  std::memcpy(out->mad.data(), umad_get_mad(buf.data()), n);
  return 1;
}

}  // namespace sarmig
