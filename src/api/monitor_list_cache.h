// The body of GET /api/v1/monitors, rebuilt incrementally. With 10,000 monitors a full
// serialisation costs tens of milliseconds; between two requests only the monitors
// checked in between changed, so each monitor's JSON is kept by (name, revision) and
// only changed ones are serialised again. Thread-safe; memory is one string per monitor.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace trainwatch::api {

class MonitorListCache {
 public:
  std::string render(const std::vector<MonitorView>& views);

 private:
  struct Entry {
    uint64_t revision = 0;
    std::string json;
  };
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace trainwatch::api
