// The line protocol between sar-agent and the consumers on its node (libsarmig), over a local
// UNIX stream socket. Internal to sar: consumers use sar/migration.h, never these lines.
//
// Every message is one ASCII line ending in '\n', at most kMaxLine bytes with the newline:
//   consumer -> agent  HELLO <version> <name>         register (name: [A-Za-z0-9._-]{1,32})
//   agent -> consumer  WELCOME <id>                   registered
//   agent -> consumer  PHASE <epoch> <phase> <flags> <deadline_ms>
//                      phase 2: move to highLIDs; 4: move back to baseLIDs; flags: SAR_MIG_FLAG_*
//   consumer -> agent  DRAINED <epoch> <phase>        done with that phase
//   agent -> consumer  BYE <reason>                   the agent drops the connection
// Anything else is a protocol error: the agent closes the connection.
#ifndef SAR_LIBSARMIG_PROTO_H_
#define SAR_LIBSARMIG_PROTO_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace sarmig {

constexpr size_t kMaxLine = 128;
constexpr int kProtoVersion = 1;
constexpr const char* kDefaultSocket = "/run/sar-agent/migration.sock";

inline bool ValidName(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

/// Parses "PHASE e p f d" (without the newline). False on anything else.
inline bool ParsePhaseLine(const std::string& line, uint32_t* epoch, uint32_t* phase,
                           uint32_t* flags, uint32_t* deadline_ms) {
  char tail = 0;
  unsigned e = 0, p = 0, f = 0, d = 0;
  if (std::sscanf(line.c_str(), "PHASE %u %u %u %u%c", &e, &p, &f, &d, &tail) != 4) return false;
  if (e == 0 || (p != 2 && p != 4)) return false;
  *epoch = e;
  *phase = p;
  *flags = f;
  *deadline_ms = d;
  return true;
}

/// Parses "DRAINED e p". False on anything else.
inline bool ParseDrainedLine(const std::string& line, uint32_t* epoch, uint32_t* phase) {
  char tail = 0;
  unsigned e = 0, p = 0;
  if (std::sscanf(line.c_str(), "DRAINED %u %u%c", &e, &p, &tail) != 2) return false;
  *epoch = e;
  *phase = p;
  return true;
}

/// Parses "HELLO v name". False on anything else.
inline bool ParseHelloLine(const std::string& line, int* version, std::string* name) {
  char buf[64] = {0};
  char tail = 0;
  int v = 0;
  if (std::sscanf(line.c_str(), "HELLO %d %40s%c", &v, buf, &tail) != 2) return false;
  if (!ValidName(buf)) return false;
  *version = v;
  *name = buf;
  return true;
}

}  // namespace sarmig

#endif  // SAR_LIBSARMIG_PROTO_H_
