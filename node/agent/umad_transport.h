// MadTransport over libibumad (the kernel's user_mad interface, or ibsim's umad2sim).
#ifndef SAR_AGENT_UMAD_TRANSPORT_H_
#define SAR_AGENT_UMAD_TRANSPORT_H_

#include <memory>
#include <mutex>
#include <string>

#include "transport.h"

namespace sarmig {

struct UmadOptions {
  std::string ca;  // empty: the first CA
  int port = 0;    // 0: the first active port
  // Test only (ibsim): also take SMP requests and open the issm device after the agents are
  // registered, so that ibsim forwards unsolicited Reports to this client.
  bool ibsim_issm = false;
};

class UmadTransport : public MadTransport {
 public:
  /// Opens the port and registers the agents. nullptr with `*err` on failure.
  static std::unique_ptr<UmadTransport> Open(const UmadOptions& opt, std::string* err);
  ~UmadTransport() override;

  bool Send(const Mad& mad, const MadAddr& to) override;
  int Recv(MadPacket* out, int timeout_ms) override;

  uint64_t port_guid() const { return port_guid_; }
  int port_num() const { return port_num_; }
  const std::string& ca_name() const { return ca_name_; }

 private:
  UmadTransport() = default;
  int AgentFor(uint8_t mgmt_class) const;

  int portid_ = -1;
  int issm_fd_ = -1;
  int agent_smp_ = -1, agent_dr_ = -1, agent_sa_ = -1;
  uint64_t port_guid_ = 0;
  int port_num_ = 0;
  std::string ca_name_;
  std::mutex send_mu_;
};

}  // namespace sarmig

#endif  // SAR_AGENT_UMAD_TRANSPORT_H_
