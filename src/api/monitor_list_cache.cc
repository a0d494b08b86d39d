#include "api/monitor_list_cache.h"

#include "core/json_text.h"
#include "views/json_views.h"

namespace trainwatch::api {

MonitorListCache::MonitorListCache(const engine::Engine& engine, const Clock& clock)
    : engine_(engine), bodies_(clock, kMaxAge, [&engine] { return engine.state_generation(); }) {}

void MonitorListCache::body(Audience audience, std::function<void(Result<Body>)> deliver) {
  bodies_.get(
      audience, "", [this](Audience built_for) -> Result<std::string> { return render(built_for); },
      std::move(deliver));
}

std::string MonitorListCache::render(Audience audience) {
  std::lock_guard lock(render_mu_);
  engine::MonitorListDelta delta = engine_.monitors_since(seen_revision_);
  seen_revision_ = delta.revision;
  // Every form is brought up to date whichever is asked for: the revision is shared.
  for (const auto& view : delta.changed) {
    MonitorJson& json = json_by_name_[view.config->name];
    json.shown_to_public = json_text(views::monitor_summary(view, Audience::kPublic));
    const bool differs = views::summary_has_secrets(view);
    json.shown_to_viewer =
        differs ? json_text(views::monitor_summary(view, Audience::kViewer)) : std::string();
    json.shown_to_admin = differs ? json_text(views::monitor_summary(view, Audience::kAdmin)) : std::string();
  }
  // A reload that removed monitors leaves entries no name refers to; drop them.
  if (json_by_name_.size() > delta.names.size()) {
    std::unordered_map<std::string, MonitorJson> kept;
    for (const auto& name : delta.names) kept[name] = std::move(json_by_name_[name]);
    json_by_name_.swap(kept);
  }
  auto shown = [audience](const MonitorJson& json) -> const std::string& {
    if (sees_monitor_secrets(audience) && !json.shown_to_admin.empty()) return json.shown_to_admin;
    if (audience == Audience::kViewer && !json.shown_to_viewer.empty()) return json.shown_to_viewer;
    return json.shown_to_public;
  };
  size_t bytes = 16;
  for (const auto& name : delta.names) bytes += shown(json_by_name_[name]).size() + 1;
  std::string body;
  body.reserve(bytes);
  body += "{\"monitors\":[";
  for (size_t i = 0; i < delta.names.size(); ++i) {
    if (i != 0) body += ',';
    body += shown(json_by_name_[delta.names[i]]);
  }
  body += "]}";
  return body;
}

}  // namespace trainwatch::api
