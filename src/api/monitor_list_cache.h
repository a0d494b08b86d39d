// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two requests only the monitors
// checked in between changed, so each monitor's JSON is kept and only the monitors the
// engine reports as changed since the last render are serialised again.
//
// Even so, assembling 2 MB costs milliseconds, so the body is rebuilt at most every
// kMaxAge, by one request at a time; requests meanwhile share the last body (no copy).
// A list is therefore at most kMaxAge older than the engine (plus one rebuild).
// Thread-safe; memory is one string per monitor plus one body.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/engine.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  static constexpr Millis kMaxAge{500};

  std::shared_ptr<const std::string> body(const Engine& engine, MonoTime now);

 private:
  std::string render(const Engine& engine);  // under build_mu_

  std::mutex build_mu_;  // one rebuild at a time; guards the fields below it
  uint64_t seen_revision_ = 0;
  std::unordered_map<std::string, std::string> json_by_name_;

  std::mutex body_mu_;  // guards the published body
  std::shared_ptr<const std::string> body_;
  MonoTime built_at_{};
};

}  // namespace trainwatch::api
