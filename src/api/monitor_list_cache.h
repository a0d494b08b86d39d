// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two renders only the monitors
// checked in between changed, so each monitor's JSON is kept and only the monitors the
// engine reports as changed since the last render are serialised again.
//
// Even so, assembling 2 MB costs milliseconds, so requests share the last body (no copy)
// through an http::TtlCache: one that finds it older than kMaxAge has it rebuilt in the
// background rather than waiting. A list is at most kMaxAge plus one rebuild older than
// the engine. Thread-safe; memory is one string per monitor plus one body.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/engine.h"
#include "http/ttl_cache.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  static constexpr Millis kMaxAge{500};

  std::shared_ptr<const std::string> body(const Engine& engine, MonoTime now);

 private:
  std::string render(const Engine& engine);

  std::mutex render_mu_;  // one render at a time; guards the two fields below
  uint64_t seen_revision_ = 0;
  std::unordered_map<std::string, std::string> json_by_name_;

  http::TtlCache<std::string> bodies_{kMaxAge};  // last: its thread stops first
};

}  // namespace trainwatch::api
