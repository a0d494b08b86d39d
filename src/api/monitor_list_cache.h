// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two requests only the monitors
// checked in between changed, so each monitor's JSON is kept and only the monitors the
// engine reports as changed since the last render are serialised again.
// Thread-safe (one render at a time); memory is one string per monitor.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "engine/engine.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  std::string render(const Engine& engine);

 private:
  std::mutex mu_;
  uint64_t seen_revision_ = 0;
  std::unordered_map<std::string, std::string> json_by_name_;
};

}  // namespace trainwatch::api
