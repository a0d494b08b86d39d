// PingSink: where an accepted ping goes (in serve, the engine). PingIngest resolves the
// token, rate-limits and trims; the sink records the ping for its monitor and decides
// what it means for the monitor's state.
//
// Contract: record_ping() may be called from any number of threads at once and returns
// without waiting for the store. It calls `done` exactly once: with the ping's commit
// status (from the store's writer thread), or at once with an error when the ping is not
// accepted (no heartbeat monitor of that name, a full store queue).
#pragma once

#include <string>

#include "core/ping.h"
#include "storage/write_done.h"

namespace trainwatch::heartbeat {

class PingSink {
 public:
  virtual ~PingSink() = default;
  virtual void record_ping(std::string monitor, Ping ping, WriteDone done) = 0;
};

}  // namespace trainwatch::heartbeat
