#include "agent/health.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <boost/json.hpp>

#include "agent/gpu_health.h"
#include "agent/node_metrics.h"
#include "core/json_text.h"
#include "core/process_exit.h"
#include "core/rank_rule.h"
#include "core/utf8.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::agent {
namespace json = boost::json;
using reporter::CheckpointState;
using reporter::status_name;

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string gb(uint64_t bytes) { return fmt("%.1f GB", static_cast<double>(bytes) / 1e9); }

std::string rank_name(const RankView& r) {
  return "rank " + std::to_string(r.slot.rank) + " (pid " + std::to_string(r.slot.pid) + ")";
}
double seconds_since(int64_t now_ms, int64_t then_ms) {
  return then_ms > 0 ? static_cast<double>(now_ms - then_ms) / 1000.0 : -1;
}
json::value num_or_null(double v) { return std::isfinite(v) ? json::value(v) : json::value(nullptr); }
json::value time_or_null(int64_t ms) {
  return ms > 0 ? json::value(static_cast<double>(ms) / 1000.0) : json::value(nullptr);
}

// "rank 0 has reported non-finite losses since step 120: 11 so far, nan at step 130": the
// run's first step, which the library keeps, names where it went wrong. A library too old
// to keep it gives the latest step only.
std::string nonfinite_message(const reporter::SlotSnapshot& s) {
  const std::string now = fmt("%f", s.loss) + " at step " + std::to_string(s.step);
  if (!s.has_nonfinite || s.nonfinite_total == 0 || s.nonfinite_first_step < 0)
    return "rank " + std::to_string(s.rank) + " reported loss " + now;
  return "rank " + std::to_string(s.rank) + " has reported non-finite losses since step " +
         std::to_string(s.nonfinite_first_step) + ": " + std::to_string(s.nonfinite_total) + " so far, " +
         now;
}

RankFacts rank_facts(const RankView& r, int64_t now_ms) {
  RankFacts f;
  f.alive = r.alive;
  f.finished = r.slot.status == TW_STATUS_FINISHED;
  f.failed = r.slot.status == TW_STATUS_FAILED;
  f.exited_ok = r.exit && r.exit->code == 0;
  f.checkpointing = r.slot.status == TW_STATUS_CHECKPOINTING;
  f.state = r.state;
  // From the last step only, as the server sees it (its report's last_step_age_ms): before
  // the first step, the start-up rules speak instead.
  if (r.last_step_ms > 0) f.no_step_for = Millis(now_ms - r.last_step_ms);
  return f;
}

}  // namespace

namespace {

void add(HealthReport& h, std::string code, std::string message) {
  h.reasons.push_back({std::move(code), std::move(message)});
}
void warn(HealthReport& h, std::string code, std::string message) {
  h.warnings.push_back({std::move(code), std::move(message)});
}

void slot_reasons(const NodeSnapshot& node, HealthReport& h) {
  if (!node.slot_error.empty()) add(h, "no_slots", node.slot_error);
  for (const auto& m : node.malformed_slots) add(h, "slot_file_malformed", m);
  // A warning, not a reason: TOP is writable by every local user, so anyone can plant a
  // refused entry there, and that alone must not turn the node's /health red. A rank whose
  // own directory is refused is missing from ranks[] and says so on its stderr.
  for (const auto& m : node.refused_slot_dirs) warn(h, "slot_dir_refused", m);
  // A warning: the slot's rank (if it was one) cannot be seen, but nothing says it failed.
  for (const auto& m : node.invalid_slots) warn(h, "slot_invalid", m);
  // A reason, as a malformed file is: a rank runs here that nobody can watch.
  for (const auto& r : node.removed_slots) add(h, "slot_removed", r.message);
  if (node.ranks.empty() && node.slot_error.empty() && node.malformed_slots.empty() &&
      node.removed_slots.empty()) {
    // A warning, not a failure: before the job starts, an uptime check of /health (the
    // docs' pattern) must not page; the job's monitor says when it is late to start.
    warn(h, "no_ranks", "no rank of job '" + node.job + "' has started on this node yet");
  }
}

// Stopped and blocked ranks are judged by the server's rule (core/rank_rule.h), so this
// node's /health and the server's view of the job agree on them. Returns whether the
// rank still runs (the checks of running_rank_reasons() apply to it).
bool ruling_reasons(const RankView& r, int64_t now_ms, double since, HealthReport& h) {
  const auto& s = r.slot;
  const RankRuling ruling = rule_rank(rank_facts(r, now_ms));
  const std::string code(ruling_code(ruling));
  switch (ruling) {
    case RankRuling::kGone:
      add(h, code,
          rank_name(r) + " is gone while " + std::string(status_name(s.status)) + " at step " +
              std::to_string(s.step) + (r.exit ? ": it " + describe_exit(*r.exit) : ""));
      return false;
    case RankRuling::kFailed:
      add(h, code, "rank " + std::to_string(s.rank) + " failed" + (s.error.empty() ? "" : ": " + s.error));
      return false;
    case RankRuling::kDone: return false;
    case RankRuling::kStopped:
      add(h, code,
          rank_name(r) + " is stopped (state " + std::string(1, r.state) + "), no step for " +
              fmt("%.0f s", since));
      break;
    case RankRuling::kBlocked:
    case RankRuling::kBlockedCheckpointing: {
      std::string msg = rank_name(r) +
                        " is in uninterruptible sleep (state D, usually I/O or a driver call), no step for " +
                        fmt("%.0f s", since);
      if (ruling == RankRuling::kBlocked) {
        add(h, code, msg);
      } else {
        warn(h, code, msg + " while checkpointing");
      }
      break;
    }
    case RankRuling::kRunning: break;
  }
  return true;
}

void running_rank_reasons(const RankView& r, double since, const Thresholds& t, HealthReport& h) {
  const auto& s = r.slot;
  if (s.status == TW_STATUS_INITIALIZING) {
    add(h, "initializing", "rank " + std::to_string(s.rank) + " is still initializing");
  }
  if (s.status == TW_STATUS_TRAINING && since * 1000 > static_cast<double>(t.stall_after.count())) {
    h.stalled = true;
    add(h, "stalled",
        "rank " + std::to_string(s.rank) + " has made no step for " + fmt("%.0f s", since) + " (threshold " +
            fmt("%.0f s", static_cast<double>(t.stall_after.count()) / 1000) + ")");
  }
  if ((s.present & TW_FIELD_LOSS) && !std::isfinite(s.loss)) add(h, "loss_not_finite", nonfinite_message(s));
  if (s.overflow_consecutive >= t.overflow_streak) {
    add(h, "overflow_streak",
        "rank " + std::to_string(s.rank) + " skipped " + std::to_string(s.overflow_consecutive) +
            " steps in a row on fp16 overflow (loss scale " + fmt("%g", s.loss_scale) + ")");
  }
  if (s.checkpoint_state == CheckpointState::kFailed) {
    add(h, "checkpoint_failed",
        "rank " + std::to_string(s.rank) + " failed to write the checkpoint of step " +
            std::to_string(s.checkpoint_step));
  }
}

// Returns whether any rank still runs: only then is a closed rendezvous a reason.
bool rank_reasons(const NodeSnapshot& node, const Thresholds& t, HealthReport& h) {
  bool any_running = false;
  for (const auto& r : node.ranks) {
    const int64_t step_ms = r.last_step_ms > 0 ? r.last_step_ms : r.slot.status_changed_ms;
    const double since = seconds_since(node.now_ms, step_ms);
    if (!ruling_reasons(r, node.now_ms, since, h)) continue;
    any_running = true;
    running_rank_reasons(r, since, t, h);
  }
  return any_running;
}

void disk_and_memory_reasons(const NodeSnapshot& node, const Thresholds& t, HealthReport& h) {
  if (node.disks.hung) add(h, "disk_hung", "a disk probe has not answered within its deadline");
  if (node.disks.value) {
    for (const auto& d : *node.disks.value) {
      if (!d.ok) {
        add(h, "disk_missing", d.name + " " + d.path + " cannot be read: " + d.error);
      } else if (d.free_bytes < t.disk_free_bytes) {
        add(h, "disk_low",
            d.name + " " + d.path + " has " + gb(d.free_bytes) + " free < " + gb(t.disk_free_bytes));
      }
    }
  }
  if (node.memory.value && node.memory.value->ok &&
      node.memory.value->available_bytes < t.host_memory_free_bytes) {
    add(h, "memory_low",
        "host memory available " + gb(node.memory.value->available_bytes) + " < " +
            gb(t.host_memory_free_bytes));
  }
}

void rendezvous_reasons(const NodeSnapshot& node, bool any_running, HealthReport& h) {
  if (node.rendezvous.hung)
    add(h, "rendezvous_hung", "the rendezvous probe has not answered within its deadline");
  if (any_running && node.rendezvous.value && node.rendezvous.value->checked &&
      !node.rendezvous.value->listening) {
    const auto& rv = *node.rendezvous.value;
    add(h, "rendezvous_closed",
        "rendezvous " + rv.host + ":" + std::to_string(rv.port) + " is not accepting connections" +
            (rv.error.empty() ? "" : " (" + rv.error + ")"));
  }
}

}  // namespace

// Reasons (and warnings) in a fixed order: the slots, each rank, the GPUs, the fabric, the
// disks and host memory, the rendezvous.
HealthReport evaluate(const NodeSnapshot& node, const Thresholds& t) {
  HealthReport h;
  slot_reasons(node, h);
  const bool any_running = rank_reasons(node, t, h);
  gpu_reasons(node, t, h);
  fabric_reasons(node, h);
  disk_and_memory_reasons(node, t, h);
  rendezvous_reasons(node, any_running, h);
  h.healthy = h.reasons.empty();
  return h;
}

namespace {

json::object training_block(const NodeSnapshot& node, bool stalled) {
  json::object tr;
  const RankView* lead = node.ranks.empty() ? nullptr : &node.ranks.front();
  int alive = 0;
  uint64_t oom = 0;
  bool compiled = !node.ranks.empty();
  int64_t last_step_ms = 0;
  bool any_failed = false, any_gone = false;
  for (const auto& r : node.ranks) {
    alive += r.alive;
    oom += r.slot.gemini_oom_events;
    compiled = compiled && (r.slot.kernels_compiled || r.slot.status != TW_STATUS_INITIALIZING);
    last_step_ms = std::max(last_step_ms, r.last_step_ms);
    any_failed = any_failed || r.slot.status == TW_STATUS_FAILED;
    any_gone =
        any_gone || (!r.alive && r.slot.status != TW_STATUS_FINISHED && r.slot.status != TW_STATUS_FAILED);
  }
  std::string status(lead ? status_name(lead->slot.status) : to_string(reporter::RankStatus::kInitializing));
  if (any_failed || any_gone) status = "failed";
  tr["status"] = status;
  tr["step"] = lead && lead->slot.step >= 0 ? json::value(lead->slot.step) : json::value(0);
  tr["loss"] =
      lead && (lead->slot.present & TW_FIELD_LOSS) ? num_or_null(lead->slot.loss) : json::value(nullptr);
  tr["loss_scale"] = lead && (lead->slot.present & TW_FIELD_LOSS_SCALE) ? num_or_null(lead->slot.loss_scale)
                                                                        : json::value(nullptr);
  tr["overflow_steps"] = lead ? lead->slot.overflow_total : 0;
  tr["last_checkpoint_step"] = lead && lead->slot.last_ok_checkpoint_step >= 0
                                   ? json::value(lead->slot.last_ok_checkpoint_step)
                                   : json::value(nullptr);
  tr["last_checkpoint_time"] = time_or_null(lead ? lead->slot.last_ok_checkpoint_ms : 0);
  tr["workers_alive"] = alive;
  tr["started_at"] = time_or_null(lead ? lead->slot.started_at_ms : 0);
  tr["last_step_time"] = time_or_null(last_step_ms);
  tr["pipeline_stage"] =
      lead && lead->slot.pipeline_stage >= 0 ? json::value(lead->slot.pipeline_stage) : json::value(nullptr);
  tr["gemini_oom_events"] = oom;
  tr["world_size"] = lead ? lead->slot.world_size : 0;
  tr["kernels_compiled"] = compiled;
  tr["stalled"] = stalled;
  return tr;
}

json::array reasons_json(const std::vector<Reason>& rs) {
  json::array a;
  for (const auto& r : rs) a.push_back(json::object{{"code", r.code}, {"message", r.message}});
  return a;
}

}  // namespace

namespace {

json::object rank_json(const RankView& r, int64_t now_ms) {
  const auto& s = r.slot;
  json::object o{
      {"rank", s.rank},
      {"local_rank", s.local_rank},
      {"pid", s.pid},
      {"alive", r.alive},
      {"process_state", std::string(1, r.state)},
      {"status", status_name(s.status)},
      {"step", s.step},
      {"steps_per_second", r.steps_per_s},
      {"seconds_since_step",
       r.last_step_ms ? json::value(seconds_since(now_ms, r.last_step_ms)) : json::value(nullptr)},
      {"loss", (s.present & TW_FIELD_LOSS) ? num_or_null(s.loss) : json::value(nullptr)},
      {"loss_scale", (s.present & TW_FIELD_LOSS_SCALE) ? num_or_null(s.loss_scale) : json::value(nullptr)},
      {"grad_norm", (s.present & TW_FIELD_GRAD_NORM) ? num_or_null(s.grad_norm) : json::value(nullptr)},
      {"overflow_steps", s.overflow_total},
      {"overflow_consecutive", s.overflow_consecutive},
      {"nonfinite_total", s.has_nonfinite ? json::value(s.nonfinite_total) : json::value(nullptr)},
      {"nonfinite_first_step", s.has_nonfinite && s.nonfinite_first_step >= 0
                                   ? json::value(s.nonfinite_first_step)
                                   : json::value(nullptr)},
      {"nonfinite_first_time", time_or_null(r.nonfinite_first_ms)},
      {"samples", s.samples},
      {"tokens", s.tokens},
      {"last_checkpoint_step",
       s.last_ok_checkpoint_step >= 0 ? json::value(s.last_ok_checkpoint_step) : json::value(nullptr)},
      {"error", s.error.empty() ? json::value(nullptr) : json::value(s.error)}};
  json::object gauges;
  for (const auto& g : s.gauges) gauges[g.name] = num_or_null(g.value);
  o["gauges"] = std::move(gauges);
  // The launcher's identity; null when the rank's library is too old to record it.
  o["attempt"] = s.has_identity ? json::value(s.attempt) : json::value(nullptr);
  o["run_id"] = s.has_identity && !s.run_id.empty() ? json::value(s.run_id) : json::value(nullptr);
  o["node_rank"] = s.has_identity && s.node_rank >= 0 ? json::value(s.node_rank) : json::value(nullptr);
  // The GPU it uses (gpu_ranks.h) and the memory it holds there; null when unknown.
  o["gpu"] = nullptr;
  if (r.gpu) {
    o["gpu"] = json::object{{"index", r.gpu->index},
                            {"memory_used_bytes", r.gpu->memory_used >= 0 ? json::value(r.gpu->memory_used)
                                                                          : json::value(nullptr)},
                            {"source", r.gpu->source}};
  }
  return o;
}

// disks[], memory and rendezvous: null when not probed.
void add_host(const NodeSnapshot& node, const Thresholds& t, json::object& root) {
  json::array disks;
  if (node.disks.value) {
    for (const auto& d : *node.disks.value) {
      disks.push_back(json::object{{"name", d.name},
                                   {"path", d.path},
                                   {"ok", d.ok && d.free_bytes >= t.disk_free_bytes},
                                   {"free_gb", static_cast<double>(d.free_bytes) / 1e9},
                                   {"total_gb", static_cast<double>(d.total_bytes) / 1e9},
                                   {"error", d.error.empty() ? json::value(nullptr) : json::value(d.error)}});
    }
  }
  root["disks"] = std::move(disks);
  if (node.memory.value && node.memory.value->ok) {
    const auto& mem = *node.memory.value;
    root["memory"] = json::object{{"free_gb", static_cast<double>(mem.available_bytes) / 1e9},
                                  {"total_gb", static_cast<double>(mem.total_bytes) / 1e9},
                                  {"ok", mem.available_bytes >= t.host_memory_free_bytes}};
  } else {
    root["memory"] = nullptr;
  }
  if (node.rendezvous.value && node.rendezvous.value->checked) {
    const auto& rv = *node.rendezvous.value;
    root["rendezvous"] = json::object{{"host", rv.host}, {"port", rv.port}, {"listening", rv.listening}};
  } else {
    root["rendezvous"] = nullptr;
  }
}

// GET /health's body; its keys in the order the endpoint has always written them.
json::object health_json(const NodeSnapshot& node, const Thresholds& t, const HealthReport& h) {
  const bool stalled = h.stalled;
  json::object root;
  root["status"] = h.healthy ? "ok" : "degraded";
  root["job"] = node.job;
  root["training"] = training_block(node, stalled);
  root["stalled"] = stalled;
  json::array ranks;
  for (const auto& r : node.ranks) ranks.push_back(rank_json(r, node.now_ms));
  root["ranks"] = std::move(ranks);
  add_gpus(node, t, root);
  add_fabric(node, root);
  add_host(node, t, root);
  root["reasons"] = reasons_json(h.reasons);
  root["warnings"] = reasons_json(h.warnings);
  return root;
}

}  // namespace

Rendered render(const NodeSnapshot& node, const Thresholds& t) {
  const HealthReport h = evaluate(node, t);
  Rendered out;
  out.status = h.healthy ? 200 : 503;
  // Slot text is checked (reporter/slot_check.h); this catches anything else, so /health is
  // always UTF-8 JSON whatever a rank or a file on the node held.
  out.health_json = utf8_repaired(json_text(health_json(node, t, h)));
  out.metrics = utf8_repaired(node_metrics(node, h.healthy));
  return out;
}

}  // namespace trainwatch::agent
