#include "config/job_readers.h"

#include <algorithm>
#include <optional>
#include <string>

namespace trainwatch::config_detail {
namespace {

// Thresholds of a job, under `thresholds:` of a job monitor or of the `jobs:` section.
void read_job_thresholds(Section& parent, JobThresholds& t) {
  if (!parent.has("thresholds")) {
    parent.raw("thresholds");
    return;
  }
  Section s(parent.diag(), parent.raw("thresholds"), parent.key_path("thresholds"));
  if (!s.valid()) return;
  auto positive = [&](const char* key) -> std::optional<Millis> {
    auto d = s.duration(key);
    if (d && d->count() == 0) {
      s.diag().error(s.raw(key).Mark(), s.key_path(key), "found 0s; expected more than 0");
      return std::nullopt;
    }
    return d;
  };
  if (auto d = positive("startup_timeout")) t.startup_timeout = *d;
  if (auto d = positive("step_timeout")) t.step_timeout = *d;
  if (auto d = positive("step_timeout_min")) t.step_timeout_min = *d;
  if (auto d = positive("checkpoint_timeout")) t.checkpoint_timeout = *d;
  if (auto d = positive("checkpoint_timeout_min")) t.checkpoint_timeout_min = *d;
  if (auto n = s.integer("missed_reports", 1, 1000)) t.missed_reports = static_cast<int>(*n);
  if (auto d = positive("node_silent_after")) t.node_silent_after = *d;
  if (auto x = s.number("straggler_ratio", 1.0, 100.0)) t.straggler_ratio = *x;
  if (auto x = s.number("throughput_drop", 0.0, 1.0)) t.throughput_drop = *x;
  if (auto n = s.integer("overflow_streak", 1, 1'000'000)) t.overflow_streak = static_cast<int>(*n);
  if (auto x = s.number("min_loss_scale", 0.0, 1e30)) t.min_loss_scale = *x;
  if (auto x = s.number("gpu_memory_pct", 1.0, 100.0)) t.gpu_memory_pct = *x;
  if (auto x = s.number("disk_free_gb", 0.0, 1e9)) t.disk_free_bytes = static_cast<uint64_t>(*x * 1e9);
  if (auto x = s.number("host_memory_free_gb", 0.0, 1e9))
    t.host_memory_free_bytes = static_cast<uint64_t>(*x * 1e9);
  s.finish();
}

// A job is checked (its findings evaluated) every second unless `interval` says otherwise:
// reports arrive every few seconds and a finding should not wait a minute to page.
constexpr Millis kJobInterval{1'000};

}  // namespace

void read_job(Section& s, MonitorConfig& m) {
  JobCheckSpec spec;
  if (auto n = s.integer("world_size", 1, 1'000'000)) spec.world_size = static_cast<int>(*n);
  read_job_thresholds(s, spec.thresholds);
  if (!s.has("interval")) m.interval = kJobInterval;
  m.spec = spec;
}

void read_jobs(Diagnostics& diag, const YAML::Node& node, JobsConfig& out) {
  Section s(diag, node, "jobs");
  if (!s.valid()) return;
  if (auto b = s.boolean("auto_create")) out.auto_create = *b;
  if (auto token = s.string("token")) out.token = *token;
  if (auto notify = s.string_list("notify")) out.notify = *notify;
  if (auto n = s.integer("max_ranks", 1, 1'000'000)) out.max_ranks = static_cast<int>(*n);
  if (auto n = s.integer("max_ranks_per_node", 1, 1'024)) out.max_ranks_per_node = static_cast<int>(*n);
  if (auto d = s.duration("expire_after")) {
    if (d->count() < 1'000) {
      s.diag().error(s.raw("expire_after").Mark(), s.key_path("expire_after"),
                     "found less than 1s; expected at least 1s");
    } else {
      out.expire_after = *d;
    }
  }
  read_job_thresholds(s, out.thresholds);
  s.finish();
}

// jobs.notify names channels for monitors that do not exist yet: check them now, as
// check_alerting_references does for the monitors' own notify.
void check_jobs_notify(Diagnostics& diag, const YAML::Node& root, const Config& config) {
  if (!root.IsMap()) return;
  // A const lookup of an absent key yields an invalid node that throws on the next
  // lookup: test each level before going down.
  const YAML::Node jobs = root["jobs"];
  const YAML::Node list = jobs.IsDefined() && jobs.IsMap() ? jobs["notify"] : YAML::Node();
  for (size_t j = 0; j < config.jobs.notify.size(); ++j) {
    const std::string& name = config.jobs.notify[j];
    bool known = std::any_of(config.notifications.begin(), config.notifications.end(),
                             [&](const ChannelConfig& c) { return c.name == name; });
    if (known) continue;
    diag.error(list.IsSequence() && j < list.size() ? list[j].Mark() : root.Mark(),
               "jobs.notify[" + std::to_string(j) + "]",
               "found '" + name + "'; expected a channel from notifications");
  }
}

}  // namespace trainwatch::config_detail
