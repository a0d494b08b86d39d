#include "agent/node_report.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include <boost/json.hpp>

#include "agent/gpu_report.h"
#include "core/json_text.h"
#include "core/native_stack.h"
#include "core/process_exit.h"
#include "core/python_stack.h"
#include "core/utf8.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::agent {
namespace {

namespace json = boost::json;
using reporter::CheckpointState;

// JSON has no NaN or infinity; the schema spells them as strings so a NaN loss survives.
json::value number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

json::value age(int64_t now_ms, int64_t then_ms) {
  return then_ms > 0 ? json::value(std::max<int64_t>(0, now_ms - then_ms)) : json::value(nullptr);
}

json::object stack_json(const PyStack& stack) {
  return json::object{{"threads", py_threads_json(stack)}, {"truncated", stack.truncated}};
}

// The words of tw_collective's kinds, as the server reads them (jobs/report.h).
std::string_view collective_name(uint64_t kind) {
  static constexpr std::array<std::string_view, 12> kNames{
      "other",  "all_reduce", "broadcast", "barrier",    "all_gather", "reduce_scatter",
      "reduce", "gather",     "scatter",   "all_to_all", "send",       "recv"};
  return kind < kNames.size() ? kNames[kind] : kNames[0];
}

// Optional in schema 1: the declared phase when it is not training, the collectives the rank
// marks (none for an older library, or one that marks none), and its resident memory.
void add_activity(const RankView& r, json::object& out) {
  const auto& s = r.slot;
  if (r.rss_bytes > 0) out["rss_bytes"] = r.rss_bytes;
  if (!s.has_activity) return;
  static constexpr std::array<std::string_view, 3> kPhases{"train", "eval", "warmup"};
  const uint64_t phase = (s.activity >> reporter::kActivityPhaseShift) & reporter::kActivityPhaseMask;
  if (phase != 0 && phase < kPhases.size()) out["phase"] = kPhases[phase];
  if (s.collectives == 0) return;
  out["collectives"] = json::object{{"count", s.collectives},
                                    {"kind", collective_name(s.activity & reporter::kActivityKindMask)},
                                    {"inside", (s.activity & reporter::kActivityInside) != 0},
                                    {"wait_ms", r.collective_wait_ms},
                                    {"sampled_ms", r.collective_sampled_ms}};
}

json::object rank_json(const RankView& r, const RankTrack* track, int64_t now_ms, double ticks_per_s) {
  const auto& s = r.slot;
  json::object out{{"rank", s.rank},
                   {"local_rank", s.local_rank},
                   {"world_size", s.world_size},
                   {"pid", s.pid},
                   {"alive", r.alive},
                   {"state", std::string(1, r.state)},
                   {"status", reporter::status_name(s.status)},
                   {"step", s.step},
                   {"step_reports", s.step_reports},
                   {"last_step_age_ms", age(now_ms, r.last_step_ms)},
                   {"max_step_gap_ms", track ? track->max_step_gap_ms : 0},
                   {"overflow_total", s.overflow_total},
                   {"overflow_consecutive", s.overflow_consecutive},
                   {"samples", s.samples},
                   {"tokens", s.tokens}};
  if (r.alive) out["cpu_s"] = static_cast<double>(r.cpu_ticks) / ticks_per_s;
  // Optional in schema 1: absent when the rank's library predates the launch identity.
  if (s.has_identity) {
    out["attempt"] = s.attempt;
    if (!s.run_id.empty()) out["run_id"] = s.run_id;
    if (s.node_rank >= 0) out["node_rank"] = s.node_rank;
  }
  // Optional in schema 1: absent when the rank's library predates the non-finite count.
  if (s.has_nonfinite) {
    out["nonfinite_total"] = s.nonfinite_total;
    if (s.nonfinite_total > 0 && s.nonfinite_first_step >= 0) {
      out["nonfinite_first_step"] = s.nonfinite_first_step;
      out["nonfinite_first_age_ms"] = age(now_ms, r.nonfinite_first_ms);
      // The run goes on while the last loss is non-finite: its steps in a row so far.
      const bool in_run = (s.present & TW_FIELD_LOSS) && !std::isfinite(s.loss) &&
                          s.step_reports >= s.nonfinite_first_report && s.nonfinite_first_report > 0;
      out["nonfinite_run"] = in_run ? s.step_reports - s.nonfinite_first_report + 1 : 0;
    }
  }
  add_activity(r, out);
  // Optional in schema 1: the GPU it uses (agent/gpu_ranks.h), absent when unknown.
  if (r.gpu) out["gpu"] = rank_gpu_report_json(r);
  if (!r.wait.syscall.empty()) out["syscall"] = r.wait.syscall;
  if (!r.wait.wchan.empty()) out["wchan"] = r.wait.wchan;
  if (r.stack || !r.stack_note.empty() || r.native || !r.native_note.empty()) {
    json::object stack = r.stack ? stack_json(*r.stack) : json::object{{"note", r.stack_note}};
    stack["age_ms"] = age(now_ms, r.stack_ms);
    // Native frames ride in the same object: one capture, one age.
    if (r.native) stack["native"] = native_stack_json(*r.native);
    if (!r.native_note.empty()) stack["native_note"] = r.native_note;
    if (r.children) stack["children"] = child_stacks_json(*r.children);
    out["stack"] = std::move(stack);
  }
  if (track && track->gone_since_ms) out["gone_age_ms"] = age(now_ms, *track->gone_since_ms);
  if (r.exit && r.exit->signal != 0) {
    out["exit"] = json::object{{"signal", r.exit->signal},
                               {"signal_name", signal_name(r.exit->signal)},
                               {"core_dumped", r.exit->core_dumped},
                               {"oom_killed", r.exit->oom_killed}};
  } else if (r.exit) {
    out["exit"] = json::object{{"code", r.exit->code}};
  }
  if (s.present & TW_FIELD_LOSS) out["loss"] = number(s.loss);
  if (s.present & TW_FIELD_LOSS_SCALE) out["loss_scale"] = number(s.loss_scale);
  if (s.present & TW_FIELD_GRAD_NORM) out["grad_norm"] = number(s.grad_norm);
  json::object ck{{"state", to_string(s.checkpoint_state)},
                  {"step", s.checkpoint_step},
                  {"begin_age_ms", age(now_ms, s.checkpoint_begin_ms)},
                  {"last_ok_step", s.last_ok_checkpoint_step},
                  {"last_ok_age_ms", age(now_ms, s.last_ok_checkpoint_ms)}};
  if ((s.checkpoint_state == CheckpointState::kOk || s.checkpoint_state == CheckpointState::kFailed) &&
      s.checkpoint_end_ms >= s.checkpoint_begin_ms && s.checkpoint_begin_ms > 0) {
    ck["duration_ms"] = s.checkpoint_end_ms - s.checkpoint_begin_ms;
  }
  out["checkpoint"] = std::move(ck);
  if (!s.error.empty())
    out["error"] = json::object{{"message", s.error}, {"age_ms", age(now_ms, s.error_ms)}};
  return out;
}

}  // namespace

std::string render_node_report(const NodeSnapshot& node, const std::map<uint64_t, RankTrack>& tracks,
                               const ReportMeta& meta) {
  const double ticks_per_s = static_cast<double>(sysconf(_SC_CLK_TCK));
  json::array ranks;
  for (const auto& r : node.ranks) {
    auto it = tracks.find(r.slot.owner);
    ranks.push_back(rank_json(r, it == tracks.end() ? nullptr : &it->second, node.now_ms, ticks_per_s));
  }
  json::array gpus = gpus_report_json(node);
  json::array disks;
  if (node.disks.value) {
    for (const auto& d : *node.disks.value) {
      disks.push_back(json::object{{"name", d.name},
                                   {"path", d.path},
                                   {"ok", d.ok},
                                   {"error", d.error},
                                   {"free_bytes", d.free_bytes},
                                   {"total_bytes", d.total_bytes}});
    }
  }
  json::object out{{"schema", kNodeReportSchema},
                   {"job", node.job},
                   {"node", meta.node},
                   {"seq", meta.seq},
                   {"final", meta.final},
                   {"agent_pid", meta.agent_pid},
                   {"report_every_ms", meta.report_every.count()},
                   {"ranks", std::move(ranks)},
                   {"gpus", std::move(gpus)},
                   {"disks", std::move(disks)}};
  if (node.memory.value && node.memory.value->ok) {
    out["memory"] = json::object{{"available_bytes", node.memory.value->available_bytes},
                                 {"total_bytes", node.memory.value->total_bytes}};
  }
  if (node.rendezvous.value && node.rendezvous.value->checked) {
    const auto& rv = *node.rendezvous.value;
    out["rendezvous"] =
        json::object{{"host", rv.host}, {"port", rv.port}, {"listening", rv.listening}, {"error", rv.error}};
  }
  if (json::array ports = ib_ports_report_json(node); !ports.empty()) out["ib_ports"] = std::move(ports);
  if (!node.invalid_slots.empty()) {
    json::array notes;
    for (const auto& m : node.invalid_slots)
      notes.push_back(json::object{{"code", "slot_invalid"}, {"message", m}});
    out["notes"] = std::move(notes);
  }
  return utf8_repaired(json_text(out));  // UTF-8 whatever the node held (core/utf8.h)
}

}  // namespace trainwatch::agent
