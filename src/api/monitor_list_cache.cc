#include "api/monitor_list_cache.h"

#include "api/json_views.h"

namespace trainwatch::api {

std::string MonitorListCache::render(const std::vector<MonitorView>& views) {
  std::lock_guard lock(mu_);
  // Monitors removed by a reload leave stale entries; drop them when the sets differ.
  if (entries_.size() != views.size()) {
    std::map<std::string, Entry> kept;
    for (const auto& view : views) {
      if (auto it = entries_.find(view.config->name); it != entries_.end()) kept.insert(entries_.extract(it));
    }
    entries_.swap(kept);
  }
  size_t bytes = 16;
  for (const auto& view : views) {
    Entry& entry = entries_[view.config->name];
    if (entry.json.empty() || entry.revision != view.revision) {
      entry.json = boost::json::serialize(monitor_summary(view));
      entry.revision = view.revision;
    }
    bytes += entry.json.size() + 1;
  }
  std::string body;
  body.reserve(bytes);
  body += "{\"monitors\":[";
  bool first = true;
  for (const auto& view : views) {
    if (!first) body += ',';
    first = false;
    body += entries_[view.config->name].json;
  }
  body += "]}";
  return body;
}

}  // namespace trainwatch::api
