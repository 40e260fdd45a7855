// sar-mig-inject: TEST TOOL (not installed). Sends one or more protocol messages as Trap SMPs to
// the SM from this port: a generic trap 68/69 (OpenSM forwards it to the subscribers with this
// port's GUID as IssuerGID: a forged UnPath/RePath) or a vendor ack (what sar-agent sends), with
// any epoch/phase/flags, or with a broken magic. For the integration tests of the agent and the
// coordinator. Exit codes: 0 sent (prints "repressed N/M"), 2 bad arguments, 3 no port/SM.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "mad.h"
#include "umad_transport.h"

int main(int argc, char** argv) {
  CLI::App app{"sar-mig-inject: TEST TOOL: send migration-protocol traps to the SM"};
  std::string kind = "ack";
  unsigned epoch = 1, phase = 2, flags = 0, deadline_ms = 0, count = 1, seq = 1;
  bool bad_magic = false;
  int trap = 0;
  app.add_option("--kind", kind, "unpath, repath or ack")
      ->check(CLI::IsMember({"unpath", "repath", "ack"}));
  app.add_option("--epoch", epoch);
  app.add_option("--phase", phase);
  app.add_option("--flags", flags);
  app.add_option("--deadline-ms", deadline_ms);
  app.add_option("--seq", seq, "first seq (incremented per message)");
  app.add_option("--count", count, "messages to send")->check(CLI::Range(1u, 100000u));
  app.add_option("--generic-trap", trap, "send kind unpath/repath as this generic trap number");
  app.add_flag("--bad-magic", bad_magic, "corrupt the magic");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::string err;
  auto t = sarmig::UmadTransport::Open(sarmig::UmadOptions{}, &err);
  if (!t) {
    fprintf(stderr, "sar-mig-inject: %s\n", err.c_str());
    return 3;
  }
  t->Send(sarmig::BuildLocalPortInfoGet(0x1000, static_cast<uint8_t>(t->port_num())),
          sarmig::MadAddr{0xFFFF, 0, 0});
  sarmig::PortInfo pi;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  bool have = false;
  sarmig::MadPacket pkt;
  while (!have && std::chrono::steady_clock::now() < until) {
    if (t->Recv(&pkt, 50) > 0) have = sarmig::ParsePortInfoResp(pkt.mad, &pi);
  }
  if (!have || pi.sm_lid == 0) {
    fprintf(stderr, "sar-mig-inject: no PortInfo / SM LID for this port\n");
    return 3;
  }
  std::array<uint8_t, 16> gid{};
  sar_mig_put(gid.data(), pi.gid_prefix, 8);
  sar_mig_put(gid.data() + 8, t->port_guid(), 8);
  unsigned sent = 0, repressed = 0;
  for (unsigned i = 0; i < count; i++) {
    sar_mig_msg_t m{};
    m.kind = kind == "unpath" ? SAR_MIG_UNPATH : kind == "repath" ? SAR_MIG_REPATH : SAR_MIG_ACK;
    m.phase = static_cast<uint8_t>(phase);
    m.flags = static_cast<uint8_t>(flags);
    m.epoch = epoch;
    m.deadline_ms = deadline_ms;
    m.seq = seq + i;
    uint64_t tid = 0x494E0000u + i;
    sarmig::Mad mad;
    if (kind == "ack") {
      mad = sarmig::BuildAckTrap(tid, pi.lid, gid, m);
    } else {
      uint8_t details[SAR_MIG_DATA_SIZE];
      sar_mig_encode(&m, details);
      int num = trap ? trap : (kind == "unpath" ? SAR_MIG_TRAP_UNPATH : SAR_MIG_TRAP_REPATH);
      mad = sarmig::BuildGenericTrap(tid, static_cast<uint16_t>(num), pi.lid, details);
    }
    if (bad_magic) mad[sarmig::kSmpDataOffset + sarmig::kNoticeDataDetails] ^= 0xFF;
    if (t->Send(mad, sarmig::MadAddr{pi.sm_lid, 0, 0})) sent++;
  }
  until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (repressed < sent && std::chrono::steady_clock::now() < until) {
    if (t->Recv(&pkt, 50) > 0 && pkt.mad[3] == sarmig::kMethodTrapRepress) repressed++;
  }
  printf("sent %u to SM LID %u from LID %u, repressed %u/%u\n", sent, pi.sm_lid, pi.lid, repressed,
         sent);
  return 0;
}
