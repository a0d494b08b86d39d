#include "jobs/job_state.h"

#include "jobs/barrier_wait.h"
#include "jobs/rank_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace trainwatch::jobs {
namespace {

bool is_checkpointing(const RankReport& r) {
  return r.status == RankStatus::kCheckpointing || r.checkpoint.state == CheckpointState::kInProgress;
}

// A rank that makes no steps on purpose, and that its peers wait for in their next collective.
bool pauses(const RankReport& r) { return is_checkpointing(r) || evaluating(r); }

MonoTime minus(MonoTime t, int64_t ms) { return t - Millis(std::max<int64_t>(ms, 0)); }

double seconds(MonoTime::duration d) { return std::chrono::duration<double>(d).count(); }

bool nonfinite(const std::optional<double>& loss) { return loss && !std::isfinite(*loss); }

// Keeps the first step and time of the rank's latest run of non-finite losses (see
// RankRecord). `rec.last` is still the rank's previous report; last_step_at is this one's.
void track_nonfinite(RankRecord& rec, const RankReport& r, MonoTime now) {
  if (r.nonfinite_first_step) {
    if (rec.nonfinite_first_step != r.nonfinite_first_step || !rec.nonfinite_first_at) {
      rec.nonfinite_first_step = r.nonfinite_first_step;
      rec.nonfinite_first_at =
          r.nonfinite_first_age_ms ? minus(now, *r.nonfinite_first_age_ms) : rec.last_step_at.value_or(now);
    }
    return;
  }
  // The agent counts and has seen none; or it cannot count, and the server watches the loss.
  if (r.nonfinite_total || !nonfinite(r.loss)) return;
  if (!rec.nonfinite_first_step || !nonfinite(rec.last.loss)) {
    rec.nonfinite_first_step = r.step;
    rec.nonfinite_first_at = rec.last_step_at.value_or(now);
  }
}

}  // namespace

namespace {

// The rank's usual step time over its window, in ms: the median of its windows' own
// (wall over steps), leaving out windows off the job's pace; 0 when none has steps.
double usual_step_ms(const std::deque<ProgressSample>& window) {
  std::vector<double> per_step;
  for (size_t i = 1; i < window.size(); ++i) {
    const ProgressSample& a = window[i - 1];
    const ProgressSample& b = window[i];
    if (a.off_pace || b.off_pace || b.step_reports <= a.step_reports) continue;
    per_step.push_back(std::chrono::duration<double, std::milli>(b.at - a.at).count() /
                       static_cast<double>(b.step_reports - a.step_reports));
  }
  if (per_step.empty()) return 0;
  std::nth_element(per_step.begin(), per_step.begin() + static_cast<std::ptrdiff_t>(per_step.size() / 2),
                   per_step.end());
  return per_step[per_step.size() / 2];
}

}  // namespace

StepCosts step_costs(const std::deque<ProgressSample>& window) {
  StepCosts c;
  const double usual_ms = usual_step_ms(window);
  // Newest first, back to kStragglerRecentSteps steps over kStragglerRecentSpan at least:
  // a straggler that began twenty steps ago is named from those steps, not averaged away
  // among the minute before them.
  const double span_s = std::chrono::duration<double>(kStragglerRecentSpan).count();
  // The windows of a pause found (newer ones first) end at or after its first instant.
  std::optional<MonoTime> pause_began;
  for (size_t i = window.size(); i >= 2; --i) {
    if (c.steps >= kStragglerRecentSteps && c.wall_s >= span_s) break;
    const ProgressSample& a = window[i - 2];
    const ProgressSample& b = window[i - 1];
    if (a.off_pace || b.off_pace || b.step_reports < a.step_reports) continue;
    if (a.step_reports < kStragglerWarmupSteps) continue;
    if (usual_ms > 0 && static_cast<double>(b.max_gap_ms) > kPauseGapFactor * usual_ms) {
      pause_began = b.at - Millis(b.max_gap_ms);
      continue;
    }
    // A window without a step inside that pause: the rank that worked through it (rank 0
    // evaluating) would show it as busy time its peers spent waiting in the barrier.
    if (pause_began && b.step_reports == a.step_reports && b.at >= *pause_began) continue;
    c.steps += b.step_reports - a.step_reports;
    const double wall = std::chrono::duration<double>(b.at - a.at).count();
    c.wall_s += wall;
    if (a.cpu_s && b.cpu_s) {
      c.cpu_s += std::max(0.0, *b.cpu_s - *a.cpu_s);
    } else {
      c.cpu_known = false;
    }
    // The share of the agent's samples in this window that found the rank in a collective.
    const double sampled = a.sampled_s && b.sampled_s ? *b.sampled_s - *a.sampled_s : 0;
    if (sampled > 0 && a.wait_s && b.wait_s) {
      c.busy_s += wall * (1.0 - std::clamp((*b.wait_s - *a.wait_s) / sampled, 0.0, 1.0));
    } else {
      c.busy_known = false;
    }
  }
  return c;
}

namespace {

// The rank that gave an ending launch its outcome first: the earliest seen gone or failing
// (a launcher tears the other ranks down after the first failure), the lowest rank on a tie.
std::optional<RankEnding> first_ending(const std::map<int, RankRecord>& ranks, LaunchOutcome outcome) {
  std::optional<RankEnding> first;
  for (const auto& [rank, rec] : ranks) {
    if (!ended_launch_as(rec.last, outcome)) continue;
    // Without an age from its agent, the report that showed the end bounds it.
    MonoTime at = rec.seen;
    if (rec.gone_at) at = std::min(at, *rec.gone_at);
    if (rec.error_at) at = std::min(at, *rec.error_at);
    if (first && first->at <= at) continue;
    first = RankEnding{rank, at, rec.last.exit, rec.last.error};
  }
  return first;
}

// Appends a throughput sample, dropping the oldest past kThroughputHistory.
void keep_bounded(std::deque<ThroughputSample>& history, ThroughputSample value) {
  history.push_back(value);
  while (history.size() > kThroughputHistory) history.pop_front();
}

}  // namespace

// A report is one instant: the current attempt's processes that still ran at their last
// report go first (their news, a death among them), so that a new launch in the same
// report, whatever the agent's order, closes that attempt on how it really ended, not on
// how it was a report ago. Those already ended have no news; the new launch retires them.
std::vector<const RankReport*> JobState::in_order_of_news(const NodeReport& report) const {
  std::vector<bool> current_process(report.ranks.size());
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    const RankReport& r = report.ranks[i];
    auto it = ranks_.find(r.rank);
    if (it == ranks_.end()) continue;
    const RankRecord& rec = it->second;
    current_process[i] = rec.last.pid == r.pid && rec.node == report.node && rec.last.alive &&
                         rec.last.status != RankStatus::kFinished &&
                         launch_of(r, report.node) == LaunchOf::kCurrent;
  }
  std::vector<const RankReport*> ordered;
  ordered.reserve(report.ranks.size());
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    if (current_process[i]) ordered.push_back(&report.ranks[i]);
  }
  for (size_t i = 0; i < report.ranks.size(); ++i) {
    if (!current_process[i]) ordered.push_back(&report.ranks[i]);
  }
  return ordered;
}

bool JobState::ingest(const NodeReport& report, MonoTime now, SystemTime wall) {
  auto node_it = nodes_.find(report.node);
  if (node_it == nodes_.end()) {
    if (nodes_.size() >= kMaxNodesPerJob) return false;
    node_it = nodes_.emplace(report.node, NodeRecord{}).first;
    node_it->second.name = report.node;
  }
  NodeRecord& node = node_it->second;
  node.last_seen = now;
  node.last_seen_wall = wall;
  if (node.reports == 0 || node.report_every != report.report_every) {
    // Kept without a walk of the nodes for each new one (filling a 16,384-node job walked
    // them 16,384 times); only a node that slowed down from the shortest needs the walk.
    const bool was_shortest = node.reports > 0 && node.report_every == shortest_report_every_;
    node.report_every = report.report_every;
    if (node.report_every < shortest_report_every_) {
      shortest_report_every_ = node.report_every;
    } else if (was_shortest) {
      shortest_report_every_ = Millis{5'000};
      for (const auto& [name, n] : nodes_)
        shortest_report_every_ = std::min(shortest_report_every_, n.report_every);
    }
  }
  node.final = report.final;
  node.agent_pid = report.agent_pid;
  ++node.reports;
  node.ranks.clear();
  for (const auto& r : report.ranks) node.ranks.push_back(r.rank);
  node.gpus = report.gpus;
  node.ib_ports = report.ib_ports;
  node.disks = report.disks;
  node.memory_available_bytes = report.memory_available_bytes;
  node.memory_total_bytes = report.memory_total_bytes;
  node.rendezvous = report.rendezvous;
  node.slots_removed = report.slots_removed;
  if (!first_report_) first_report_ = now;
  ++reports_;

  // A checkpoint or an evaluation anywhere holds every rank (the others wait for it in the
  // next collective), so a window with such a pause teaches nothing about step gaps or
  // throughput; nor does a declared warm-up about the job's pace.
  for (const auto& r : report.ranks) {
    bool recent_end =
        r.checkpoint.last_ok_age_ms && *r.checkpoint.last_ok_age_ms <= 2 * report.report_every.count();
    if (pauses(r) || recent_end) last_pause_activity_ = now;
    if (r.phase == DeclaredPhase::kWarmup) last_warmup_activity_ = now;
  }
  const auto here = paused_by_node_.find(report.node);
  if (paused_ranks_ > (here == paused_by_node_.end() ? 0 : here->second))
    last_pause_activity_ = now;  // another node's rank is in a checkpoint or an evaluation
  note_barrier_waits(report, now);
  auto recent = [&](const std::optional<MonoTime>& t) { return t && now - *t <= 2 * report.report_every; };
  const bool paused = recent(last_pause_activity_);
  const bool off_pace = paused || recent(last_warmup_activity_) || recent(last_barrier_wait_);

  const std::vector<const RankReport*> ordered = in_order_of_news(report);
  for (const RankReport* rank_report : ordered) {
    const RankReport& r = *rank_report;
    const LaunchOf launch = launch_of(r, report.node);
    if (launch == LaunchOf::kOlder) continue;  // a rank of an earlier launch, still in its agent's view
    if (launch != LaunchOf::kCurrent) begin_launch(launch, r, now, wall);
    update_rank(r, report, now, wall, off_pace);
    AttemptRecord& a = attempts_.back();
    a.max_step = std::max(a.max_step, r.step);
    if (r.step_reports > 0 && !a.first_step_at) {
      a.first_step_at = ranks_[r.rank].last_step_at.value_or(now);
      // The step it began from: one step a call since (seen at its first report or later).
      a.first_step = std::clamp<int64_t>(r.step - static_cast<int64_t>(r.step_reports - 1), 0,
                                         std::max<int64_t>(r.step, 0));
    }
    if (r.step_reports > static_cast<uint64_t>(kWarmupSteps) && !a.warm_at) a.warm_at = now;
  }
  learn_step_gap(report, paused);
  if (!off_pace) record_throughput(now);

  record_gpu_memory(report, to_unix_ms(wall));
  return true;
}

// Which launch a rank's report belongs to. In order:
//  - a process of the launch the current one replaced: history, whatever it says;
//  - another run id than the current attempt's (both known): a new run when the rank lives
//    and the id is not an earlier run's; else history;
//  - a lower restart count: a new run when the rank lives (a resubmission counts from 0
//    again: srun after torchrun's attempt 1); else history;
//  - a higher one: the next attempt of the current run when the rank lives; else history;
//  - the same count: a new run when every rank of the current attempt has ended and a new
//    process lives in the place of one of them (the script run again); the next attempt
//    when a new live process has another world size (an elastic resize); else the current
//    attempt.
// A dead rank never begins a launch: it says nothing about what runs now.
JobState::LaunchOf JobState::launch_of(const RankReport& r, const std::string& node) const {
  if (attempts_.empty()) return LaunchOf::kNewRun;
  if (r.pid > 0 && retired_.count({node, r.pid}) > 0) return LaunchOf::kOlder;
  const AttemptRecord& current = attempts_.back();
  if (!r.run_id.empty() && !current.run_id.empty() && r.run_id != current.run_id) {
    const bool earlier = std::any_of(runs_.begin(), runs_.end(), [&](const RunRecord& run) {
      return run.run_id == r.run_id && run.number != current.run;
    });
    return r.alive && !earlier ? LaunchOf::kNewRun : LaunchOf::kOlder;
  }
  const int launcher = r.attempt.value_or(0);
  if (launcher < current.launcher_attempt) return r.alive ? LaunchOf::kNewRun : LaunchOf::kOlder;
  if (launcher > current.launcher_attempt) return r.alive ? LaunchOf::kNewAttempt : LaunchOf::kOlder;
  auto it = ranks_.find(r.rank);
  const bool same_process = it != ranks_.end() && it->second.last.pid == r.pid && it->second.node == node;
  if (same_process) return LaunchOf::kCurrent;
  // The same launch count with another world size: an elastic resize, or a plain relaunch
  // at another size. A dead rank says nothing about the size of what runs now.
  const bool resized = r.world_size > 0 && current.world_size > 0 && r.world_size != current.world_size;
  if (!r.alive) return resized ? LaunchOf::kOlder : LaunchOf::kCurrent;
  // A new process for a rank the attempt already had, once all of them ended; a rank first
  // heard of now (another node's, or the rest of this report) joins the attempt.
  if (it != ranks_.end() && every_rank_ended()) return LaunchOf::kNewRun;
  return resized ? LaunchOf::kNewAttempt : LaunchOf::kCurrent;
}

bool JobState::every_rank_ended() const {
  if (ranks_.empty()) return false;  // nothing reported yet (or just resumed from a memo)
  return std::all_of(ranks_.begin(), ranks_.end(), [](const auto& entry) {
    const RankReport& last = entry.second.last;
    return !last.alive || last.status == RankStatus::kFinished || last.status == RankStatus::kFailed;
  });
}

void JobState::begin_launch(LaunchOf kind, const RankReport& r, MonoTime now, SystemTime wall) {
  const bool new_run = kind == LaunchOf::kNewRun || runs_.empty();
  if (!attempts_.empty()) {
    AttemptRecord& current = attempts_.back();
    // The launcher brought the ranks back: its own restart, or a requeue under the same id.
    const bool relaunched =
        kind == LaunchOf::kNewAttempt || (!r.run_id.empty() && r.run_id == current.run_id);
    std::vector<const RankReport*> last;
    last.reserve(ranks_.size());
    for (const auto& [rank, rec] : ranks_) last.push_back(&rec.last);
    current.outcome = ended_as(last, relaunched);
    current.ended_wall = wall;
    current.ended_at = now;
    current.ending = first_ending(ranks_, current.outcome);
    if (new_run && !runs_.empty()) {
      runs_.back().outcome = current.outcome;
      runs_.back().ended_wall = wall;
    }
    // The previous launch's ranks are history: what runs now is the new one.
    retired_.clear();
    for (const auto& [rank, rec] : ranks_) {
      if (rec.last.pid > 0) retired_.emplace(rec.node, rec.last.pid);
    }
    ranks_.clear();
    paused_by_node_.clear();
    paused_ranks_ = 0;
  }
  if (new_run) {
    RunRecord run;
    run.number = runs_.empty() ? 1 : runs_.back().number + 1;
    run.run_id = r.run_id;
    run.started_wall = wall;
    runs_.push_back(std::move(run));
    while (runs_.size() > kMaxRuns) runs_.pop_front();
  }
  AttemptRecord a;
  a.number = attempts_.empty() ? 1 : attempts_.back().number + 1;
  a.run = runs_.back().number;
  a.launcher_attempt = r.attempt.value_or(0);
  a.run_id = r.run_id;
  a.world_size = r.world_size;
  a.started = now;
  a.started_wall = wall;
  attempts_.push_back(std::move(a));
  while (attempts_.size() > kMaxAttempts) attempts_.pop_front();
}

void JobState::update_rank(const RankReport& r, const NodeReport& report, MonoTime now, SystemTime wall,
                           bool off_pace) {
  RankRecord& rec = ranks_[r.rank];
  count_paused(rec, -1);  // counted again below, as this report says
  const bool same_process = rec.last.pid == r.pid && rec.node == report.node;
  if (!same_process) {
    rec = RankRecord{};
  }
  const uint64_t previous_reports = rec.last.step_reports;
  rec.node = report.node;
  rec.seen = now;

  if (r.last_step_age_ms) {
    rec.last_step_at = minus(now, *r.last_step_age_ms);
  } else if (r.step_reports > 0 && (r.step_reports != previous_reports || !rec.last_step_at)) {
    rec.last_step_at = now;
  }
  if (r.step_reports > 0 && !first_step_) first_step_ = rec.last_step_at.value_or(now);

  if (r.alive) {
    rec.gone_at.reset();
  } else if (!rec.gone_at) {
    rec.gone_at = minus(now, r.gone_age_ms.value_or(0));
  }
  if (r.error_age_ms && !r.error.empty()) rec.error_at = minus(now, *r.error_age_ms);

  const CheckpointReport& c = r.checkpoint;
  rec.checkpoint_begin_at.reset();
  if (c.state == CheckpointState::kInProgress && c.begin_age_ms)
    rec.checkpoint_begin_at = minus(now, *c.begin_age_ms);
  if (c.last_ok_step >= 0 && c.last_ok_step != last_ok_checkpoint_step_ && c.last_ok_age_ms) {
    MonoTime ok_at = minus(now, *c.last_ok_age_ms);
    if (last_ok_checkpoint_at_ && ok_at > *last_ok_checkpoint_at_)
      checkpoint_interval_ = std::chrono::duration_cast<Millis>(ok_at - *last_ok_checkpoint_at_);
    last_ok_checkpoint_at_ = ok_at;
    last_ok_checkpoint_step_ = c.last_ok_step;
    if (c.duration_ms) learned_.observe_checkpoint(Millis(*c.duration_ms));
  }

  track_evaluation(rec, r, now);
  if (left_collective(rec.last, r)) rec.left_collective_at = now;
  ProgressSample sample{now,      r.step_reports, r.cpu_s,  std::nullopt,     std::nullopt,
                        r.tokens, r.samples,      off_pace, r.max_step_gap_ms};
  if (r.collective && r.collective->count > 0) {
    sample.wait_s = static_cast<double>(r.collective->wait_ms) / 1000.0;
    sample.sampled_s = static_cast<double>(r.collective->sampled_ms) / 1000.0;
  }
  const int64_t wall_ms = to_unix_ms(wall);
  const std::string key = "rank " + std::to_string(r.rank);
  if (!rec.window.empty()) {
    const ProgressSample& prev = rec.window.back();
    const double dt = seconds(now - prev.at);
    if (r.step_reports > prev.step_reports && dt > 0 && !off_pace) {
      const double steps = static_cast<double>(r.step_reports - prev.step_reports);
      add_point("step_time", key, wall_ms, 1000.0 * dt / steps);
      if (r.tokens > prev.tokens)
        add_point("tokens_per_s", key, wall_ms, static_cast<double>(r.tokens - prev.tokens) / dt);
    }
  }
  if (r.loss && std::isfinite(*r.loss) && r.step_reports != previous_reports)
    add_point("loss", key, wall_ms, *r.loss);
  track_nonfinite(rec, r, now);
  // A run of reports off the job's pace keeps only its newest, the one the next window
  // starts from: step costs, rates and throughput read no window that ends or begins in a
  // pause. One place each, a checkpoint's half-dozen reports (and the two report intervals
  // after it) no longer push the steps before it out of the window: the straggler rule was
  // left with too few steps, and a straggler went unnamed for up to a window after each.
  if (off_pace && !rec.window.empty() && rec.window.back().off_pace) rec.window.pop_back();
  rec.window.push_back(sample);
  while (rec.window.size() > kProgressWindow) rec.window.pop_front();
  rec.costs = step_costs(rec.window);
  rec.last = r;
  count_paused(rec, +1);
}

void JobState::track_evaluation(RankRecord& rec, const RankReport& r, MonoTime now) {
  if (evaluating(r) && r.alive) {
    if (!rec.evaluating_since) rec.evaluating_since = now;
    return;
  }
  if (rec.evaluating_since && r.alive)
    learned_.observe_evaluation(std::chrono::duration_cast<Millis>(now - *rec.evaluating_since));
  rec.evaluating_since.reset();
}

void JobState::note_barrier_waits(const NodeReport& report, MonoTime now) {
  for (const auto& r : report.ranks) {
    auto it = ranks_.find(r.rank);
    if (it == ranks_.end() || it->second.node != report.node || !waits_in_barrier(it->second.last, r))
      continue;
    last_barrier_wait_ = now;
    // Found a report late: the throughput samples taken since its last step hold the pause.
    if (!r.last_step_age_ms) continue;
    const MonoTime began = minus(now, *r.last_step_age_ms);
    while (!throughput_.empty() && throughput_.back().at > began) throughput_.pop_back();
    while (!training_throughput_.empty() && training_throughput_.back().at > began)
      training_throughput_.pop_back();
  }
}

void JobState::count_paused(const RankRecord& rec, int sign) {
  if (!pauses(rec.last)) return;
  size_t& on_node = paused_by_node_[rec.node];
  if (sign > 0) {
    ++on_node;
    ++paused_ranks_;
  } else {
    if (on_node > 0) --on_node;
    if (paused_ranks_ > 0) --paused_ranks_;
  }
}

void JobState::learn_step_gap(const NodeReport& report, bool paused) {
  if (paused) return;
  int64_t longest = 0;
  for (const auto& r : report.ranks) {
    // The first steps are slow (compilation, warm-up): learn only after a few.
    if (!r.alive || r.status != RankStatus::kTraining ||
        r.step_reports <= static_cast<uint64_t>(kWarmupSteps))
      continue;
    longest = std::max(longest, r.max_step_gap_ms);
  }
  if (longest > 0) learned_.observe_step_gap(Millis(longest));
}

void JobState::record_throughput(MonoTime now) {
  // One job-wide sample per shortest report interval, however many nodes report. The walk
  // below visits every rank, so it is tried once an interval whether or not it finds a rank
  // with two samples: while a job's nodes send their first reports, none has, and trying at
  // each report made filling a 131,072-rank job quadratic (16,384 reports x 131,072 ranks).
  if (now - last_throughput_at_ < shortest_report_every_) return;
  last_throughput_at_ = now;
  double tokens = 0, samples = 0, steps = 0;
  int counted = 0;
  for (const auto& [rank, rec] : ranks_) {
    if (rec.window.size() < 2 || !rec.last.alive) continue;
    const ProgressSample& a = rec.window[rec.window.size() - 2];
    const ProgressSample& b = rec.window.back();
    // A pause holds every rank, but each node's reports see it begin and end on their own
    // beat: one node's ranks can be past it while another's last window still holds it. Left
    // out, those ranks made the sum of the rest read as the job at half its pace (a false
    // throughput_drop after every checkpoint or evaluation on a busy machine), so the job's
    // window is off pace while any rank's is.
    if (a.off_pace || b.off_pace) return;
    const double dt = seconds(b.at - a.at);
    if (dt <= 0) continue;
    tokens += static_cast<double>(b.tokens - std::min(a.tokens, b.tokens)) / dt;
    samples += static_cast<double>(b.samples - std::min(a.samples, b.samples)) / dt;
    steps += static_cast<double>(b.step_reports - std::min(a.step_reports, b.step_reports)) / dt;
    ++counted;
  }
  if (counted == 0) return;
  // The unit is the richest the job has ever reported and then stays: a window with no
  // progress at all is 0 tokens/s, not 0 steps/s beside a median in tokens/s.
  if (tokens > 0) {
    throughput_unit_ = "tokens/s";
  } else if (samples > 0 && std::string_view(throughput_unit_) == "steps/s") {
    throughput_unit_ = "samples/s";
  }
  const std::string_view unit = throughput_unit_;
  const double value = unit == "tokens/s" ? tokens : unit == "samples/s" ? samples : steps / counted;
  keep_bounded(throughput_, {now, value});
  if (value > 0) keep_bounded(training_throughput_, {now, value});
}

JobState JobState::copy_for_reader(bool with_ranks, const std::set<std::string>* only_nodes) const {
  JobState copy(name_, created_);
  if (only_nodes == nullptr) {
    copy.nodes_ = nodes_;
    if (with_ranks) copy.ranks_ = ranks_;
  } else {
    for (const std::string& name : *only_nodes) {
      auto node = nodes_.find(name);
      if (node == nodes_.end()) continue;
      copy.nodes_.emplace(name, node->second);
      if (!with_ranks) continue;
      for (int rank : node->second.ranks) {
        if (auto it = ranks_.find(rank); it != ranks_.end()) copy.ranks_.emplace(rank, it->second);
      }
    }
  }
  copy.learned_ = learned_;
  copy.first_report_ = first_report_;
  copy.first_step_ = first_step_;
  copy.attempts_ = attempts_;
  copy.runs_ = runs_;
  copy.last_ok_checkpoint_at_ = last_ok_checkpoint_at_;
  copy.last_ok_checkpoint_step_ = last_ok_checkpoint_step_;
  copy.checkpoint_interval_ = checkpoint_interval_;
  copy.last_pause_activity_ = last_pause_activity_;
  copy.last_warmup_activity_ = last_warmup_activity_;
  copy.last_barrier_wait_ = last_barrier_wait_;
  copy.throughput_ = throughput_;
  copy.training_throughput_ = training_throughput_;
  copy.throughput_unit_ = throughput_unit_;
  copy.last_throughput_at_ = last_throughput_at_;
  copy.reports_ = reports_;
  return copy;
}

// The GPU memory chart: a series per GPU, named by the ranks that use it, as their agent
// found them, so the chart reads by rank.
void JobState::record_gpu_memory(const NodeReport& report, int64_t wall_ms) {
  for (const auto& g : report.gpus) {
    if (!g.memory_total) continue;
    std::vector<int> users;
    for (const auto& r : report.ranks) {
      if (r.gpu && r.gpu->index == g.index) users.push_back(r.rank);
    }
    add_point("gpu_mem",
              report.node + " gpu " + std::to_string(g.index) +
                  (users.empty() ? "" : " (" + ranks_phrase(users) + ")"),
              wall_ms, g.memory_pct());
  }
}

void JobState::add_point(const std::string& metric, const std::string& key, int64_t at_ms, double value) {
  auto& by_key = series_[metric];
  if (by_key.size() >= kMaxSeriesKeys && by_key.count(key) == 0) return;
  Series& s = by_key[key];
  s.push_back({at_ms, value});
  while (s.size() > kMaxSeriesPoints) s.pop_front();
}

}  // namespace trainwatch::jobs
