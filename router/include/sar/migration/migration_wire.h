/* The baseLID/highLID migration protocol on the wire: what the OpenSM plugin (the coordinator)
 * puts in a notice's DataDetails and what a node agent (sar-agent) puts in its acknowledgement.
 *
 * Header-only C (the plugin is C, the agent C++), no allocation, no I/O: encode into and decode
 * from the 54-byte DataDetails field of an InfiniBand Notice (IBA 14.2.5.1, bytes 10..63 of the
 * Notice attribute). Multi-byte fields are big-endian (network order) like the rest of a MAD.
 *
 * Transport (facts measured on stock OpenSM 3.3.23, ../shared/notes/migration-protocol.md):
 *  - coordinator -> agents: generic Notice, type 0x83, producer type 4 (class manager), trap 68
 *    (SAR_MIG_TRAP_UNPATH: "move to highLIDs") or 69 (SAR_MIG_TRAP_REPATH: "move back to
 *    baseLIDs"), sent with osm_report_notice to the ports subscribed with InformInfo;
 *  - agent -> coordinator: a Trap SMP (class 0x01, method 0x05, attribute Notice) to the SM LID,
 *    a vendor notice (IsGeneric 0, type 4 = informational, VendorID SAR_MIG_VENDOR_ID, DeviceID
 *    SAR_MIG_DEVICE_ID). OpenSM fills IssuerGID from the sender's port: the coordinator keys
 *    ackers by that GID, never by what the payload claims.
 *
 * Layout of DataDetails (54 bytes):
 *   0  u32  magic   SAR_MIG_MAGIC
 *   4  u8   version SAR_MIG_VERSION
 *   5  u8   kind    sar_mig_kind_t
 *   6  u8   phase   1..5: UNPATH carries 1 and its acks 2; REPATH carries 4 and its acks 4
 *   7  u8   flags   SAR_MIG_FLAG_*
 *   8  u32  epoch   increases by one per migration epoch; never 0 in a valid message
 *  12  u32  deadline_ms  UNPATH: how long the agents have to ack; else 0
 *  16  u16  consumers    ACK: consumers registered on the node
 *  18  u16  drained      ACK: consumers that answered in time
 *  20  u64  sent_ns      sender's CLOCK_MONOTONIC at send (for latency logs only)
 *  28  u32  seq          sender's sequence number (makes resent acks distinct: OpenSM drops
 *                        the 11th identical trap from one LID within 5 s)
 *  32..53    reserved, zero
 */
#ifndef SAR_MIGRATION_WIRE_H_
#define SAR_MIGRATION_WIRE_H_

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SAR_MIG_DATA_SIZE 54
#define SAR_MIG_MAGIC 0x5341524Du /* "SARM" */
#define SAR_MIG_VERSION 1
#define SAR_MIG_TRAP_UNPATH 68
#define SAR_MIG_TRAP_REPATH 69
#define SAR_MIG_VENDOR_ID 0x534152u /* "SAR", 24 bits */
#define SAR_MIG_DEVICE_ID 0x4D47u   /* "MG" */

typedef enum sar_mig_kind_t {
  SAR_MIG_UNPATH = 1, /* coordinator: move your traffic to highLIDs, then ack (phase 1 -> 2) */
  SAR_MIG_REPATH = 2, /* coordinator: move back to baseLIDs, then ack (phase 4) */
  SAR_MIG_ACK = 3     /* agent: phase done on this node */
} sar_mig_kind_t;

/* REPATH: the epoch was aborted, the old base tables stay (move back all the same). */
#define SAR_MIG_FLAG_STAY 0x01u
/* ACK: some consumer missed its deadline; the agent acks anyway and says so. */
#define SAR_MIG_FLAG_LATE_CONSUMER 0x02u

typedef struct sar_mig_msg_t {
  uint8_t kind;
  uint8_t phase;
  uint8_t flags;
  uint32_t epoch;
  uint32_t deadline_ms;
  uint16_t consumers;
  uint16_t drained;
  uint64_t sent_ns;
  uint32_t seq;
} sar_mig_msg_t;

static inline void sar_mig_put(uint8_t* p, uint64_t v, int bytes) {
  int i;
  for (i = bytes - 1; i >= 0; i--) {
    p[i] = (uint8_t)(v & 0xFFu);
    v >>= 8;
  }
}

static inline uint64_t sar_mig_get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  int i;
  for (i = 0; i < bytes; i++) v = (v << 8) | p[i];
  return v;
}

/* Writes `m` into data[SAR_MIG_DATA_SIZE]. */
static inline void sar_mig_encode(const sar_mig_msg_t* m, uint8_t* data) {
  memset(data, 0, SAR_MIG_DATA_SIZE);
  sar_mig_put(data + 0, SAR_MIG_MAGIC, 4);
  data[4] = SAR_MIG_VERSION;
  data[5] = m->kind;
  data[6] = m->phase;
  data[7] = m->flags;
  sar_mig_put(data + 8, m->epoch, 4);
  sar_mig_put(data + 12, m->deadline_ms, 4);
  sar_mig_put(data + 16, m->consumers, 2);
  sar_mig_put(data + 18, m->drained, 2);
  sar_mig_put(data + 20, m->sent_ns, 8);
  sar_mig_put(data + 28, m->seq, 4);
}

/* Reads data[SAR_MIG_DATA_SIZE] into *m. Returns 0 if it is a well-formed message of this
 * protocol (magic, version, a known kind, phase 1..5, epoch != 0, reserved bytes zero), -1
 * otherwise (*m is then unspecified). Whether it fits the current epoch is the caller's rule. */
static inline int sar_mig_decode(const uint8_t* data, sar_mig_msg_t* m) {
  int i;
  if (sar_mig_get(data, 4) != SAR_MIG_MAGIC || data[4] != SAR_MIG_VERSION) return -1;
  m->kind = data[5];
  m->phase = data[6];
  m->flags = data[7];
  m->epoch = (uint32_t)sar_mig_get(data + 8, 4);
  m->deadline_ms = (uint32_t)sar_mig_get(data + 12, 4);
  m->consumers = (uint16_t)sar_mig_get(data + 16, 2);
  m->drained = (uint16_t)sar_mig_get(data + 18, 2);
  m->sent_ns = sar_mig_get(data + 20, 8);
  m->seq = (uint32_t)sar_mig_get(data + 28, 4);
  if (m->kind < SAR_MIG_UNPATH || m->kind > SAR_MIG_ACK) return -1;
  if (m->phase < 1 || m->phase > 5 || m->epoch == 0) return -1;
  for (i = 32; i < SAR_MIG_DATA_SIZE; i++)
    if (data[i] != 0) return -1;
  return 0;
}

#ifdef __cplusplus
}
#endif

#endif /* SAR_MIGRATION_WIRE_H_ */
