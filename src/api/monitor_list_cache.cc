#include "api/monitor_list_cache.h"

#include "api/json_views.h"

namespace trainwatch::api {

std::shared_ptr<const std::string> MonitorListCache::body(const Engine& engine, MonoTime now) {
  // render() cannot fail, so neither can get().
  return *bodies_.get("", now, [this, &engine]() -> Result<std::string> { return render(engine); });
}

std::string MonitorListCache::render(const Engine& engine) {
  std::lock_guard lock(render_mu_);
  MonitorListDelta delta = engine.monitors_since(seen_revision_);
  seen_revision_ = delta.revision;
  for (const auto& view : delta.changed) json_by_name_[view.config->name] = boost::json::serialize(monitor_summary(view));
  // A reload that removed monitors leaves entries no name refers to; drop them.
  if (json_by_name_.size() > delta.names.size()) {
    std::unordered_map<std::string, std::string> kept;
    for (const auto& name : delta.names) kept[name] = std::move(json_by_name_[name]);
    json_by_name_.swap(kept);
  }
  size_t bytes = 16;
  for (const auto& name : delta.names) bytes += json_by_name_[name].size() + 1;
  std::string body;
  body.reserve(bytes);
  body += "{\"monitors\":[";
  for (size_t i = 0; i < delta.names.size(); ++i) {
    if (i != 0) body += ',';
    body += json_by_name_[delta.names[i]];
  }
  body += "]}";
  return body;
}

}  // namespace trainwatch::api
