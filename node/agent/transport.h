// The agent's window on the fabric: send a MAD, receive one with a timeout. UmadTransport
// (umad_transport.h) is the libibumad implementation; the state machine's unit tests use a fake.
#ifndef SAR_AGENT_TRANSPORT_H_
#define SAR_AGENT_TRANSPORT_H_

#include <cstdint>

#include "mad.h"

namespace sarmig {

/// Where a MAD goes to or came from.
struct MadAddr {
  uint16_t lid = 0;  // 0xFFFF: directed route (permissive)
  uint32_t qpn = 0;
  uint32_t qkey = 0;
};

/// One received MAD.
struct MadPacket {
  Mad mad{};
  MadAddr from;
  int status = 0;  // transport status (e.g. a timed-out send of ours coming back); 0 = fine
};

/// Sends are non-blocking at this layer and thread-safe (the receive thread and the consumer
/// thread both send). Recv is called from one thread only.
class MadTransport {
 public:
  virtual ~MadTransport() = default;
  /// False if the MAD could not be handed to the HCA (logged by the caller).
  virtual bool Send(const Mad& mad, const MadAddr& to) = 0;
  /// 1: `*out` holds a MAD; 0: nothing within `timeout_ms`; -1: transport error.
  virtual int Recv(MadPacket* out, int timeout_ms) = 0;
};

}  // namespace sarmig

#endif  // SAR_AGENT_TRANSPORT_H_
