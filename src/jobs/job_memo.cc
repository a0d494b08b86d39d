#include "jobs/job_memo.h"

#include <boost/json.hpp>

#include "jobs/finding_code.h"
#include "jobs/kept_stacks.h"

namespace trainwatch::jobs {
namespace {

namespace json = boost::json;

// Converts between this process's monotonic instants and stored wall milliseconds.
struct Instants {
  MonoTime now;
  SystemTime wall;

  int64_t to_ms(MonoTime t) const {
    return to_unix_ms(wall - std::chrono::duration_cast<SystemTime::duration>(now - t));
  }
  json::value to_ms(const std::optional<MonoTime>& t) const {
    return t ? json::value(to_ms(*t)) : json::value(nullptr);
  }
  MonoTime from_ms(int64_t ms) const {
    return now - std::chrono::duration_cast<MonoTime::duration>(wall - from_unix_ms(ms));
  }
};

// Reading: a field of the wrong type reads as absent, so a damaged memo degrades to
// defaults field by field instead of failing the job's restore.
std::optional<int64_t> int_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return std::nullopt;
  if (const auto* i = v->if_int64()) return *i;
  if (const auto* u = v->if_uint64()) return static_cast<int64_t>(*u);
  return std::nullopt;
}
double real_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (const auto* d = v->if_double()) return *d;
  if (const auto i = int_field(o, key)) return static_cast<double>(*i);
  return 0;
}
std::string text_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  const json::string* s = v ? v->if_string() : nullptr;
  return s ? std::string(*s) : std::string();
}
bool bool_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  const bool* b = v ? v->if_bool() : nullptr;
  return b != nullptr && *b;
}
const json::array* array_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v ? v->if_array() : nullptr;
}

json::value exit_json(const std::optional<ProcessExit>& e) {
  if (!e) return nullptr;
  return json::object{{"code", e->code},
                      {"signal", e->signal},
                      {"core_dumped", e->core_dumped},
                      {"oom_killed", e->oom_killed}};
}

std::optional<ProcessExit> exit_from(const json::value* v) {
  const json::object* o = v ? v->if_object() : nullptr;
  if (o == nullptr) return std::nullopt;
  return ProcessExit{static_cast<int>(int_field(*o, "code").value_or(-1)),
                     static_cast<int>(int_field(*o, "signal").value_or(0)), bool_field(*o, "core_dumped"),
                     bool_field(*o, "oom_killed")};
}

json::value ending_json(const std::optional<RankEnding>& e, const Instants& at) {
  if (!e) return nullptr;
  return json::object{
      {"rank", e->rank}, {"at_ms", at.to_ms(e->at)}, {"exit", exit_json(e->exit)}, {"error", e->error}};
}

std::optional<RankEnding> ending_from(const json::value* v, const Instants& at) {
  const json::object* o = v ? v->if_object() : nullptr;
  if (o == nullptr) return std::nullopt;
  RankEnding e;
  e.rank = static_cast<int>(int_field(*o, "rank").value_or(-1));
  if (auto ms = int_field(*o, "at_ms")) e.at = at.from_ms(*ms);
  e.exit = exit_from(o->if_contains("exit"));
  e.error = text_field(*o, "error");
  return e;
}

json::object attempt_json(const AttemptRecord& a, const Instants& at) {
  return json::object{
      {"number", a.number},
      {"launcher_attempt", a.launcher_attempt},
      {"run_id", a.run_id},
      {"world_size", a.world_size},
      {"started_ms", at.to_ms(a.started)},
      {"first_step_at_ms", at.to_ms(a.first_step_at)},
      {"first_step", a.first_step},
      {"warm_at_ms", at.to_ms(a.warm_at)},
      {"max_step", a.max_step},
      {"run", a.run},
      {"outcome", to_string(a.outcome)},
      {"ended_ms", a.ended_wall ? json::value(to_unix_ms(*a.ended_wall)) : json::value(nullptr)},
      {"ending", ending_json(a.ending, at)}};
}

json::object run_json(const RunRecord& r) {
  return json::object{
      {"number", r.number},
      {"run_id", r.run_id},
      {"started_ms", to_unix_ms(r.started_wall)},
      {"outcome", to_string(r.outcome)},
      {"ended_ms", r.ended_wall ? json::value(to_unix_ms(*r.ended_wall)) : json::value(nullptr)}};
}

RunRecord run_from(const json::object& o) {
  RunRecord r;
  r.number = static_cast<int>(int_field(o, "number").value_or(1));
  r.run_id = text_field(o, "run_id");
  r.started_wall = from_unix_ms(int_field(o, "started_ms").value_or(0));
  r.outcome = launch_outcome_from_string(text_field(o, "outcome")).value_or(LaunchOutcome::kOpen);
  if (auto ms = int_field(o, "ended_ms")) r.ended_wall = from_unix_ms(*ms);
  return r;
}

// A memo written before runs were kept: one run per run id in a row of its attempts.
std::deque<RunRecord> runs_of(std::deque<AttemptRecord>& attempts) {
  std::deque<RunRecord> runs;
  for (auto& a : attempts) {
    if (runs.empty() || runs.back().run_id != a.run_id) {
      if (!runs.empty()) runs.back().ended_wall = a.started_wall;
      runs.push_back(RunRecord{static_cast<int>(runs.size()) + 1, a.run_id, a.started_wall,
                               LaunchOutcome::kOpen, std::nullopt});
    }
    a.run = runs.back().number;
  }
  return runs;
}

AttemptRecord attempt_from(const json::object& o, const Instants& at) {
  AttemptRecord a;
  a.number = static_cast<int>(int_field(o, "number").value_or(1));
  a.launcher_attempt = static_cast<int>(int_field(o, "launcher_attempt").value_or(0));
  a.run_id = text_field(o, "run_id");
  a.world_size = static_cast<int>(int_field(o, "world_size").value_or(0));
  if (auto ms = int_field(o, "started_ms")) {
    a.started = at.from_ms(*ms);
    a.started_wall = from_unix_ms(*ms);
  }
  if (auto ms = int_field(o, "first_step_at_ms")) a.first_step_at = at.from_ms(*ms);
  a.first_step = int_field(o, "first_step").value_or(-1);
  if (auto ms = int_field(o, "warm_at_ms")) a.warm_at = at.from_ms(*ms);
  a.max_step = int_field(o, "max_step").value_or(-1);
  a.run = static_cast<int>(int_field(o, "run").value_or(1));
  a.outcome = launch_outcome_from_string(text_field(o, "outcome")).value_or(LaunchOutcome::kOpen);
  if (auto ms = int_field(o, "ended_ms")) {
    a.ended_wall = from_unix_ms(*ms);
    a.ended_at = at.from_ms(*ms);
  }
  a.ending = ending_from(o.if_contains("ending"), at);
  return a;
}

json::object interruption_json(const Interruption& i, const Instants& at) {
  return json::object{{"attempt", i.attempt},
                      {"code", to_string(i.code)},
                      {"kind", to_string(i.cause.kind)},
                      {"detail", i.cause.detail},
                      {"message", i.message},
                      {"failed_ms", at.to_ms(i.failed_at)},
                      {"detected_ms", at.to_ms(i.detected_at)},
                      {"step", i.step},
                      {"checkpoint_step", i.checkpoint_step},
                      {"checkpoint_ms", at.to_ms(i.checkpoint_at)},
                      {"world_size", i.world_size},
                      {"resumed_ms", at.to_ms(i.resumed_at)},
                      {"restarted", i.restarted},
                      {"resumed_from_step", i.resumed_from_step},
                      {"stacks", kept_stacks_json(i.stacks)}};
}

Interruption interruption_from(const json::object& o, const Instants& at) {
  Interruption i;
  i.attempt = static_cast<int>(int_field(o, "attempt").value_or(1));
  // A code this server does not know (a newer server wrote it) keeps its interruption.
  i.code = finding_code_from_string(text_field(o, "code")).value_or(FindingCode::kUnknown);
  i.cause.kind = interruption_kind_from_string(text_field(o, "kind")).value_or(InterruptionKind::kOther);
  i.cause.detail = text_field(o, "detail");
  i.message = text_field(o, "message");
  const int64_t failed = int_field(o, "failed_ms").value_or(0);
  i.failed_at = at.from_ms(failed);
  i.failed_wall = from_unix_ms(failed);
  i.detected_at = at.from_ms(int_field(o, "detected_ms").value_or(failed));
  i.step = int_field(o, "step").value_or(-1);
  i.checkpoint_step = int_field(o, "checkpoint_step").value_or(-1);
  if (auto ms = int_field(o, "checkpoint_ms")) i.checkpoint_at = at.from_ms(*ms);
  i.world_size = static_cast<int>(int_field(o, "world_size").value_or(0));
  if (auto ms = int_field(o, "resumed_ms")) i.resumed_at = at.from_ms(*ms);
  i.restarted = bool_field(o, "restarted");
  i.resumed_from_step = int_field(o, "resumed_from_step").value_or(-1);
  if (const json::value* stacks = o.if_contains("stacks")) i.stacks = kept_stacks_from_json(*stacks);
  return i;
}

}  // namespace

std::string encode_job_memo(const JobState& job, const InterruptionLedger& ledger, MonoTime now,
                            SystemTime wall) {
  const Instants at{now, wall};
  json::array attempts;
  for (const auto& a : job.attempts()) attempts.push_back(attempt_json(a, at));
  json::array runs;
  for (const auto& r : job.runs()) runs.push_back(run_json(r));
  json::array entries;
  for (const auto& i : ledger.entries()) entries.push_back(interruption_json(i, at));
  json::array totals;
  for (const auto& [kind, t] : ledger.totals()) {
    totals.push_back(
        json::object{{"kind", to_string(kind)}, {"count", t.count}, {"gpu_hours_lost", t.gpu_hours_lost}});
  }
  const Goodput& closed = ledger.closed();
  json::object memo{{"version", kJobMemoVersion},
                    {"first_report_ms", at.to_ms(job.first_report())},
                    {"first_step_ms", at.to_ms(job.first_step())},
                    {"runs", std::move(runs)},
                    {"attempts", std::move(attempts)},
                    {"interruptions", std::move(entries)},
                    {"totals", std::move(totals)},
                    {"count", ledger.count()},
                    {"attempt_seen", ledger.attempt_seen()},
                    {"closed", json::object{{"detecting_ms", closed.detecting.count()},
                                            {"restarting_ms", closed.restarting.count()},
                                            {"recomputing_ms", closed.recomputing.count()}}}};
  return json::serialize(memo);
}

Status apply_job_memo(std::string_view memo, JobState& job, InterruptionLedger& ledger, MonoTime now,
                      SystemTime wall) {
  boost::system::error_code ec;
  const json::value parsed = json::parse(memo, ec);
  const json::object* o = ec ? nullptr : parsed.if_object();
  if (o == nullptr) return make_error("memo.invalid", "the memo is not a JSON object");
  const auto version = int_field(*o, "version");
  if (version != kJobMemoVersion) {
    return make_error("memo.version", "memo version " + (version ? std::to_string(*version) : "missing") +
                                          "; this server reads " + std::to_string(kJobMemoVersion));
  }
  const Instants at{now, wall};
  std::deque<AttemptRecord> attempts;
  if (const auto* list = array_field(*o, "attempts")) {
    for (const auto& v : *list) {
      if (const auto* a = v.if_object()) attempts.push_back(attempt_from(*a, at));
    }
  }
  while (attempts.size() > kMaxAttempts) attempts.pop_front();
  std::deque<RunRecord> runs;
  if (const auto* list = array_field(*o, "runs")) {
    for (const auto& v : *list) {
      if (const auto* r = v.if_object()) runs.push_back(run_from(*r));
    }
  } else {
    runs = runs_of(attempts);
  }
  while (runs.size() > kMaxRuns) runs.pop_front();
  std::deque<Interruption> entries;
  if (const auto* list = array_field(*o, "interruptions")) {
    for (const auto& v : *list) {
      if (const auto* i = v.if_object()) entries.push_back(interruption_from(*i, at));
    }
  }
  while (entries.size() > kMaxInterruptions) entries.pop_front();
  std::map<InterruptionKind, CauseTotals> totals;
  if (const auto* list = array_field(*o, "totals")) {
    for (const auto& v : *list) {
      const auto* t = v.if_object();
      if (t == nullptr) continue;
      const auto kind = interruption_kind_from_string(text_field(*t, "kind"));
      if (!kind) continue;
      totals[*kind] =
          CauseTotals{static_cast<uint64_t>(std::max<int64_t>(0, int_field(*t, "count").value_or(0))),
                      real_field(*t, "gpu_hours_lost")};
    }
  }
  Goodput closed;
  if (const json::value* c = o->if_contains("closed"); c && c->is_object()) {
    const json::object& co = c->get_object();
    closed.detecting = Millis(int_field(co, "detecting_ms").value_or(0));
    closed.restarting = Millis(int_field(co, "restarting_ms").value_or(0));
    closed.recomputing = Millis(int_field(co, "recomputing_ms").value_or(0));
  }
  std::optional<MonoTime> first_report, first_step;
  if (auto ms = int_field(*o, "first_report_ms")) first_report = at.from_ms(*ms);
  if (auto ms = int_field(*o, "first_step_ms")) first_step = at.from_ms(*ms);
  // A memo from before the ledger judged attempts' endings: those it kept were judged by
  // their verdicts, so the ledger starts from the newest.
  const int newest_attempt = attempts.empty() ? 0 : attempts.back().number;
  const int attempt_seen = static_cast<int>(int_field(*o, "attempt_seen").value_or(newest_attempt));
  job.resume(std::move(runs), std::move(attempts), first_report, first_step);
  ledger.resume(std::move(entries), std::move(totals),
                static_cast<uint64_t>(std::max<int64_t>(0, int_field(*o, "count").value_or(0))), closed,
                attempt_seen);
  return Ok{};
}

}  // namespace trainwatch::jobs
