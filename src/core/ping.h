// Heartbeat pings: what a job sends to say it is alive, started, done or failed.
// Plain values shared by heartbeat ingest, the engine, storage and the API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch {

// success, fail and exit_code finish a run and move the deadline; start opens a run whose
// finish must come within grace; log is recorded and changes nothing.
enum class PingKind { kSuccess, kStart, kFail, kLog, kExitCode };

std::string_view to_string(PingKind kind);
std::optional<PingKind> ping_kind_from_string(std::string_view text);

struct Ping {
  PingKind kind = PingKind::kSuccess;
  int exit_code = 0;   // meaningful for kExitCode only: 0..255, 0 is a success
  SystemTime at{};     // when the server received it
  std::string source;  // remote address
  std::string user_agent;
  std::string body;             // already cut to the monitor's body limit
  bool body_truncated = false;  // the request body was longer than what is kept
};

// A ping as stored: the ping, its monitor, the run time since the matching start (finish
// pings only) and the row id (reads only; ids grow with arrival).
struct PingRecord {
  int64_t id = 0;
  std::string monitor;
  Ping ping;
  std::optional<int64_t> run_ms;
};

// True for the kinds that end a run (success, fail, exit code).
inline bool is_finish(PingKind kind) {
  return kind == PingKind::kSuccess || kind == PingKind::kFail || kind == PingKind::kExitCode;
}
// True for a finish that reports failure: fail, or an exit code other than 0.
inline bool is_failure(const Ping& ping) {
  return ping.kind == PingKind::kFail || (ping.kind == PingKind::kExitCode && ping.exit_code != 0);
}

}  // namespace trainwatch
