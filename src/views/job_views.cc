#include "views/job_views.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/native_stack.h"
#include "core/process_exit.h"
#include "core/python_stack.h"
#include "core/time_format.h"
#include "jobs/finding_code.h"
#include "jobs/kept_stacks.h"
#include "jobs/rank_health.h"
#include "jobs/rank_place.h"
#include "views/gpu_views.h"

namespace trainwatch::views {
namespace {

namespace json = boost::json;
using jobs::JobSnapshot;

// A number that may be NaN/inf, spelled as the report schema spells it.
json::value loss_json(const std::optional<double>& v) {
  if (!v) return nullptr;
  if (std::isnan(*v)) return "NaN";
  if (std::isinf(*v)) return *v > 0 ? "Infinity" : "-Infinity";
  return *v;
}

std::string wall_of(const JobSnapshot& s, MonoTime t) {
  return format_rfc3339(s.wall - std::chrono::duration_cast<SystemTime::duration>(s.at - t));
}

json::object finding_json(const JobSnapshot& s, const jobs::Finding& f) {
  json::array ranks;
  for (int r : f.ranks) ranks.push_back(r);
  return json::object{{"code", jobs::to_string(f.code)},
                      {"severity", jobs::to_string(f.severity)},
                      {"ranks", std::move(ranks)},
                      {"node", f.node.empty() ? json::value(nullptr) : json::value(f.node)},
                      {"message", f.message},
                      {"since", wall_of(s, f.since)},
                      {"node_fault", f.node_fault}};
}

json::object monitor_part(const engine::Engine& engine, const std::string& name) {
  json::object out;
  auto view = engine.monitor(name);
  out["status"] = view ? json::value(to_string(view->state.status)) : json::value("pending");
  out["since"] = view ? json::value(format_rfc3339(view->state.since)) : json::value(nullptr);
  out["incident"] = nullptr;
  if (view && view->open_incident) {
    const Incident& i = *view->open_incident;
    out["incident"] = json::object{{"id", i.id}, {"started", format_rfc3339(i.started)}, {"cause", i.cause}};
  }
  return out;
}

// How the rank's process ended, when its agent could tell; null while it lives or when unknown.
json::value exit_json(const jobs::RankReport& l) {
  if (!l.exit) return nullptr;
  json::object out{{"description", describe_exit(*l.exit)}};
  if (l.exit->signal != 0) {
    out["signal"] = l.exit->signal;
    out["signal_name"] = signal_name(l.exit->signal);
    out["core_dumped"] = l.exit->core_dumped;
    out["oom_killed"] = l.exit->oom_killed;
  } else {
    out["code"] = l.exit->code;
  }
  return out;
}

// The rank's Python stack as its agent last captured it, with where it puts the rank.
json::value stack_json(const jobs::RankReport& l) {
  if (!l.stack) return nullptr;
  // Native frames (eu-stack's), when the agent could take them: null when it did not.
  json::value native = nullptr;
  if (!l.stack->native.threads.empty()) native = native_stack_json(l.stack->native);
  auto place = jobs::place_of(l);
  return json::object{
      {"captured_age_ms", l.stack->age_ms},
      {"place", place && !l.stack->stack.threads.empty() ? json::value(place->text) : json::value(nullptr)},
      {"note", l.stack->note.empty() ? json::value(nullptr) : json::value(l.stack->note)},
      {"truncated", l.stack->stack.truncated},
      {"threads", py_threads_json(l.stack->stack)},
      {"native", std::move(native)},
      {"native_note",
       l.stack->native_note.empty() ? json::value(nullptr) : json::value(l.stack->native_note)},
      // Its DataLoader workers' stacks, taken with its own: [] when none came.
      {"children", child_stacks_json(l.stack->children)}};
}

json::object rank_json(const JobSnapshot& s, int rank, const jobs::RankRecord& r, jobs::RankHealth health,
                       const jobs::JobFront& front) {
  const jobs::RankReport& l = r.last;
  json::object out{
      {"rank", rank},
      {"node", r.node},
      {"pid", l.pid},
      {"local_rank", l.local_rank},
      {"status", jobs::to_string(l.status)},
      {"alive", l.alive},
      {"process_state", std::string(1, l.state)},
      {"step", l.step},
      {"lag", jobs::step_lag(r, front)},
      {"loss", loss_json(l.loss)},
      {"loss_scale", loss_json(l.loss_scale)},
      {"overflow_consecutive", l.overflow_consecutive},
      // A NaN that recovered still shows here: the count, and the latest run's first step.
      {"nonfinite_total", l.nonfinite_total ? json::value(*l.nonfinite_total) : json::value(nullptr)},
      {"nonfinite_first_step",
       r.nonfinite_first_step ? json::value(*r.nonfinite_first_step) : json::value(nullptr)},
      {"nonfinite_first",
       r.nonfinite_first_at ? json::value(wall_of(s, *r.nonfinite_first_at)) : json::value(nullptr)},
      {"tokens", l.tokens},
      {"samples", l.samples},
      {"last_seen", wall_of(s, r.seen)},
      {"last_step", r.last_step_at ? json::value(wall_of(s, *r.last_step_at)) : json::value(nullptr)},
      {"last_step_age_ms",
       r.last_step_at ? json::value(snapshot_age_ms(s, *r.last_step_at)) : json::value(nullptr)},
      {"error", l.error.empty() ? json::value(nullptr) : json::value(l.error)},
      {"checkpoint", jobs::to_string(l.checkpoint.state)},
      {"health", jobs::to_string(health)},
      {"attempt", l.attempt ? json::value(*l.attempt) : json::value(nullptr)},
      {"run_id", l.run_id.empty() ? json::value(nullptr) : json::value(l.run_id)},
      {"phase", to_string(l.phase)},
      {"collective", l.collective ? json::value(json::object{{"count", l.collective->count},
                                                             {"kind", l.collective->kind},
                                                             {"inside", l.collective->inside}})
                                  : json::value(nullptr)},
      {"rss_bytes", l.rss_bytes ? json::value(*l.rss_bytes) : json::value(nullptr)},
      {"syscall", l.syscall.empty() ? json::value(nullptr) : json::value(l.syscall)},
      {"wchan", l.wchan.empty() ? json::value(nullptr) : json::value(l.wchan)},
      {"stack", stack_json(l)},
      {"exit", exit_json(l)},
      {"gpu", gpu_of_rank_json(l)}};
  // Step time over the progress window: wall ms a step.
  out["step_time_ms"] = nullptr;
  if (r.window.size() >= 2) {
    const auto& a = r.window.front();
    const auto& b = r.window.back();
    if (b.step_reports > a.step_reports) {
      out["step_time_ms"] = std::chrono::duration<double, std::milli>(b.at - a.at).count() /
                            static_cast<double>(b.step_reports - a.step_reports);
    }
  }
  return out;
}

json::object node_json(const JobSnapshot& s, const jobs::NodeRecord& n) {
  json::array gpus, disks, ranks;
  for (const auto& g : n.gpus) gpus.push_back(gpu_json(g));
  for (const auto& d : n.disks) {
    disks.push_back(
        json::object{{"name", d.name}, {"path", d.path}, {"ok", d.ok}, {"free_bytes", d.free_bytes}});
  }
  for (int r : n.ranks) ranks.push_back(r);
  json::object out{{"name", n.name},
                   {"last_seen", format_rfc3339(n.last_seen_wall)},
                   {"last_seen_age_ms", snapshot_age_ms(s, n.last_seen)},
                   {"report_every_ms", n.report_every.count()},
                   {"final", n.final},
                   {"agent_pid", n.agent_pid},
                   {"reports", n.reports},
                   {"ranks", std::move(ranks)},
                   {"gpus", std::move(gpus)},
                   {"ib_ports", ib_ports_json(n.ib_ports)},
                   {"disks", std::move(disks)}};
  out["memory_available_bytes"] =
      n.memory_available_bytes ? json::value(*n.memory_available_bytes) : json::value(nullptr);
  out["rendezvous"] = nullptr;
  if (n.rendezvous) {
    out["rendezvous"] = json::object{
        {"host", n.rendezvous->host}, {"port", n.rendezvous->port}, {"listening", n.rendezvous->listening}};
  }
  return out;
}

}  // namespace

int64_t snapshot_age_ms(const JobSnapshot& s, MonoTime t) {
  return std::chrono::duration_cast<Millis>(s.at - t).count();
}

json::object job_summary_json(const engine::Engine& engine, const JobSnapshot& s) {
  json::object out = monitor_part(engine, s.state->name());
  out["name"] = s.state->name();
  out["phase"] = to_string(s.verdict->phase);
  out["world_size"] = s.spec.world_size > 0 ? json::value(s.spec.world_size) : json::value(nullptr);
  out["ranks"] = s.rank_count;
  out["nodes"] = s.node_count;
  out["step"] = s.max_step >= 0 ? json::value(s.max_step) : json::value(nullptr);
  out["cause"] = s.verdict->cause.empty() ? json::value(nullptr) : json::value(s.verdict->cause);
  size_t down = 0, warnings = 0;
  for (const auto& f : s.verdict->findings) ++(f.severity == jobs::Severity::kDown ? down : warnings);
  out["findings"] = json::object{{"down", down}, {"warning", warnings}};
  out["auto_created"] = s.spec.auto_created;
  return out;
}

json::value outcome_or_null(jobs::LaunchOutcome o) {
  return o == jobs::LaunchOutcome::kOpen ? json::value(nullptr) : json::value(jobs::to_string(o));
}

json::value wall_or_null(const std::optional<SystemTime>& t) {
  return t ? json::value(format_rfc3339(*t)) : json::value(nullptr);
}

// The cause of the last interruption of attempt `number`, as the ledger classed it; null
// when none interrupted it.
json::value attempt_cause(const JobSnapshot& s, int number) {
  const auto& entries = s.ledger->entries();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->attempt == number) return json::value(jobs::to_string(it->cause.kind));
  }
  return nullptr;
}

json::object attempt_json(const JobSnapshot& s, const jobs::AttemptRecord& a) {
  return json::object{
      {"number", a.number},
      {"run", a.run},
      {"launcher_attempt", a.launcher_attempt},
      {"run_id", a.run_id.empty() ? json::value(nullptr) : json::value(a.run_id)},
      {"world_size", a.world_size > 0 ? json::value(a.world_size) : json::value(nullptr)},
      {"started", format_rfc3339(a.started_wall)},
      {"first_step", a.first_step >= 0 ? json::value(a.first_step) : json::value(nullptr)},
      {"first_step_at", a.first_step_at ? json::value(wall_of(s, *a.first_step_at)) : json::value(nullptr)},
      {"max_step", a.max_step >= 0 ? json::value(a.max_step) : json::value(nullptr)},
      {"ended", wall_or_null(a.ended_wall)},
      {"outcome", outcome_or_null(a.outcome)},
      {"cause", attempt_cause(s, a.number)}};
}

json::array attempts_json(const JobSnapshot& s) {
  json::array out;
  for (const auto& a : s.state->attempts()) out.push_back(attempt_json(s, a));
  return out;
}

// Runs, oldest first, each with its attempts still kept.
json::array runs_json(const JobSnapshot& s) {
  json::array out;
  for (const auto& r : s.state->runs()) {
    json::array attempts;
    for (const auto& a : s.state->attempts()) {
      if (a.run == r.number) attempts.push_back(attempt_json(s, a));
    }
    out.push_back(json::object{{"number", r.number},
                               {"run_id", r.run_id.empty() ? json::value(nullptr) : json::value(r.run_id)},
                               {"started", format_rfc3339(r.started_wall)},
                               {"ended", wall_or_null(r.ended_wall)},
                               {"outcome", outcome_or_null(r.outcome)},
                               {"attempts", std::move(attempts)}});
  }
  return out;
}

json::object interruption_json(const JobSnapshot& s, const jobs::Interruption& i) {
  const MonoTime started = jobs::work_began(*s.state, i.attempt);
  const auto steps = i.steps_lost();
  const jobs::AttemptRecord* attempt = s.state->attempt(i.attempt);
  return json::object{
      {"attempt", i.attempt},
      {"run", attempt ? json::value(attempt->run) : json::value(nullptr)},
      {"cause", jobs::to_string(i.cause.kind)},
      {"detail", i.cause.detail},
      {"code", jobs::to_string(i.code)},
      {"message", i.message},
      {"failed_at", format_rfc3339(i.failed_wall)},
      {"detect_ms", i.to_detect().count()},
      {"resumed_at", i.resumed_at ? json::value(wall_of(s, *i.resumed_at)) : json::value(nullptr)},
      {"restart_ms", i.to_resume(s.at).count()},
      {"restarted", i.restarted},
      {"step", i.step >= 0 ? json::value(i.step) : json::value(nullptr)},
      {"checkpoint_step", i.checkpoint_step >= 0 ? json::value(i.checkpoint_step) : json::value(nullptr)},
      {"steps_lost", steps ? json::value(*steps) : json::value(nullptr)},
      {"recomputed_ms", i.recomputed(started).count()},
      {"gpu_hours_lost", i.gpu_hours_lost(s.at, started)},
      {"stacks", jobs::kept_stacks_json(i.stacks)}};
}

json::object goodput_json(const JobSnapshot& s) {
  const jobs::Goodput g = s.ledger->goodput(*s.state, s.at);
  return json::object{{"ratio", g.ratio},
                      {"wall_ms", g.wall.count()},
                      {"detecting_ms", g.detecting.count()},
                      {"restarting_ms", g.restarting.count()},
                      {"recomputing_ms", g.recomputing.count()}};
}

json::object job_detail_json(const engine::Engine& engine, const JobSnapshot& s) {
  json::object out = job_summary_json(engine, s);
  const auto& t = s.verdict->timeouts;
  out["timeouts"] =
      json::object{{"startup_ms", t.startup.count()},
                   {"step_ms", t.step.count()},
                   {"step_learned", t.step_learned},
                   {"smoothed_step_gap_ms",
                    t.smoothed_step_gap ? json::value(t.smoothed_step_gap->count()) : json::value(nullptr)},
                   {"checkpoint_ms", t.checkpoint.count()},
                   {"checkpoint_learned", t.checkpoint_learned}};
  json::array findings, ranks, nodes;
  for (const auto& f : s.verdict->findings) findings.push_back(finding_json(s, f));
  const jobs::RankHealthIndex health(*s.verdict);
  std::map<jobs::RankHealth, size_t> shown_counts;
  for (const auto& [rank, r] : s.state->ranks()) {
    const jobs::RankHealth h = health.health(rank, r, s.front);
    ++shown_counts[h];
    ranks.push_back(rank_json(s, rank, r, h, s.front));
  }
  if (s.nodes_omitted) {
    for (const std::string& name : s.named_nodes) {
      if (auto it = s.state->nodes().find(name); it != s.state->nodes().end())
        nodes.push_back(node_json(s, it->second));
    }
  } else {
    for (const auto& [node_name, n] : s.state->nodes()) nodes.push_back(node_json(s, n));
  }
  out["findings"] = std::move(findings);
  out["ranks"] = std::move(ranks);  // when ranks_omitted, only those of the nodes listed
  out["nodes_omitted"] = s.nodes_omitted;
  out["nodes_left_out"] = s.node_count - nodes.size();
  out["nodes"] = std::move(nodes);  // when nodes_omitted, those the findings name, culprit first
  out["ranks_omitted"] = s.ranks_omitted;
  out["rank_count"] = s.rank_count;
  json::array ranges;
  for (const auto& r : s.rank_summary.ranges) {
    ranges.push_back(
        json::object{{"first", r.first}, {"last", r.last}, {"health", jobs::to_string(r.health)}});
  }
  out["rank_ranges"] = std::move(ranges);
  out["rank_ranges_left_out"] = s.rank_summary.ranges_left_out;
  // The summary is the last tick's; each rank above is as it is now. With every rank in
  // this answer, its counts are of those ranks, so the two never disagree on one page.
  const auto& tally = s.ranks_omitted ? s.rank_summary.counts : shown_counts;
  json::object counts;
  for (const auto& [h, n] : tally) counts[jobs::to_string(h)] = n;
  out["rank_health"] = std::move(counts);
  out["runs"] = runs_json(s);
  out["attempts"] = attempts_json(s);
  json::array interruptions;
  for (const auto& i : s.ledger->entries()) interruptions.push_back(interruption_json(s, i));
  out["interruptions"] = std::move(interruptions);
  out["goodput"] = goodput_json(s);
  return out;
}

}  // namespace trainwatch::views
