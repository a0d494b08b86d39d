#include "api/job_routes.h"

#include "core/json_text.h"
#include "views/held_elsewhere.h"
#include "views/job_view_worker.h"
#include "views/job_views.h"
#include "views/write_access.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>

#include <spdlog/spdlog.h>
#include <boost/json.hpp>

#include "core/prometheus.h"
#include "core/time_format.h"
#include "jobs/culprit_labels.h"

namespace trainwatch::api {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;
using jobs::JobSnapshot;

void post_report(const JobApiContext& ctx, const Request& request, const Responder& respond) {
  const jobs::ReportIntake::Sender sender{request.header("authorization"), request.remote_address,
                                          request.header(jobs::kHopHeader)};
  ctx.intake.submit(request.params.at("job"), sender, request.body, [respond](jobs::IntakeAnswer answer) {
    if (answer.status == 200) return respond(Response::json(200, std::move(answer.body)));
    // The guess throttle's 429 reads as the API's (views/write_access.h).
    if (answer.retry_after.count() > 0)
      return respond(views::too_many_attempts(answer.retry_after, answer.detail));
    Response r = Response::problem(answer.status, answer.detail);
    if (answer.bearer_challenge) r.headers.emplace_back("WWW-Authenticate", "Bearer");
    respond(std::move(r));
  });
}

// Reports another replica handed on in one batch (jobs/report_batch.h): each goes through
// the intake as if it had come alone, and the batch is answered once every one of them is.
void post_report_batch(const JobApiContext& ctx, const Request& request, const Responder& respond) {
  if (request.header(jobs::kHopHeader) != "batch") {
    return respond(Response::problem(400, "only a replica sends report batches"));
  }
  auto reports = jobs::parse_report_batch(request.body);
  if (!reports) return respond(Response::problem(400, reports.error().message));
  if (reports->empty()) return respond(Response::text(200, ""));
  struct Gathered {
    std::vector<jobs::BatchedAnswer> answers;
    std::atomic<size_t> left{0};
  };
  auto gathered = std::make_shared<Gathered>();
  gathered->answers.resize(reports->size());
  gathered->left = reports->size();
  const std::string authorization(request.header("authorization"));
  for (size_t i = 0; i < reports->size(); ++i) {
    jobs::BatchedReport& r = (*reports)[i];
    auto done = [gathered, respond, i](jobs::IntakeAnswer a) {
      gathered->answers[i] = {a.status, a.status == 200 ? std::move(a.body) : std::move(a.detail)};
      if (gathered->left.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      std::string body;
      for (const auto& answer : gathered->answers) jobs::append_answer(body, answer);
      Response out = Response::text(200, std::move(body));
      out.content_type = "application/octet-stream";
      respond(std::move(out));
    };
    if (r.hop != jobs::kHopForwarded && r.hop != jobs::kHopRelayed) {
      done(jobs::IntakeAnswer{400, "hop: expected forwarded or relayed", "", false});
      continue;
    }
    ctx.intake.submit(r.job, jobs::ReportIntake::Sender{authorization, request.remote_address, r.hop},
                      std::move(r.body), done);
  }
}

void list_jobs(const JobApiContext& ctx, const Request& request, const Responder& respond) {
  json::array items;
  for (const auto& name : ctx.jobs.names()) {
    if (!views::lists_here(ctx.peers, name)) continue;
    if (auto s = ctx.jobs.snapshot(name, jobs::SnapshotDetail::kSummary))
      items.push_back(views::job_summary_json(ctx.engine, *s));
  }
  views::gather_job_rows(ctx.peers, request, std::move(items), [respond](json::array rows, bool partial) {
    json::object out{{"jobs", std::move(rows)}};
    if (partial) out["partial"] = true;  // a replica did not answer: its jobs are missing
    respond(Response::json(200, json_text(out)));
  });
}

void get_job(const JobApiContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("job");
  if (views::read_from_holders(ctx.peers, name, request, respond)) return;
  auto s = ctx.jobs.snapshot(name);
  if (!s) return respond(Response::problem(404, "no job named '" + name + "'"));
  respond(Response::json(200, json_text(views::job_detail_json(ctx.engine, *s))));
}

void get_series(const JobApiContext& ctx, const Request& request, const Responder& respond) {
  const std::string& name = request.params.at("job");
  if (views::read_from_holders(ctx.peers, name, request, respond)) return;
  auto it = request.query.find("metric");
  static const std::map<std::string, std::string> kUnits = {
      {"step_time", "ms"}, {"loss", ""}, {"tokens_per_s", "tokens/s"}, {"gpu_mem", "%"}};
  if (it == request.query.end() || kUnits.count(it->second) == 0) {
    return respond(Response::problem(400, "metric: expected step_time, loss, tokens_per_s or gpu_mem"));
  }
  auto by_key = ctx.jobs.series(name, it->second);
  if (!by_key) return respond(Response::problem(404, "no job named '" + name + "'"));
  json::array series;
  {
    for (const auto& [key, points] : *by_key) {
      json::array pts;
      for (const auto& p : points) pts.push_back(json::array{p.at_ms, p.value});
      series.push_back(json::object{{"key", key}, {"points", std::move(pts)}});
    }
  }
  respond(Response::json(200, json_text(json::object{{"job", name},
                                                     {"metric", it->second},
                                                     {"unit", kUnits.at(it->second)},
                                                     {"series", std::move(series)}})));
}

// The installation's interruption table: every job's interruptions by cause.
void get_interruptions(const JobApiContext& ctx, const Request&, const Responder& respond) {
  const auto totals = ctx.jobs.interruption_totals();
  uint64_t count = 0;
  double gpu_hours = 0;
  for (const auto& [kind, t] : totals) {
    count += t.count;
    gpu_hours += t.gpu_hours_lost;
  }
  json::array causes;
  for (const auto& [kind, t] : totals) {
    causes.push_back(
        json::object{{"cause", jobs::to_string(kind)},
                     {"count", t.count},
                     {"share", count ? static_cast<double>(t.count) / static_cast<double>(count) : 0.0},
                     {"gpu_hours_lost", t.gpu_hours_lost}});
  }
  respond(Response::json(
      200, json_text(json::object{
               {"count", count}, {"gpu_hours_lost", gpu_hours}, {"causes", std::move(causes)}})));
}

}  // namespace

void add_job_routes(http::Router& router, const JobApiContext& ctx) {
  auto bind = [ctx](void (*fn)(const JobApiContext&, const Request&, const Responder&)) {
    return [ctx, fn](const Request& request, const Responder& respond) { fn(ctx, request, respond); };
  };
  // Reads build their JSON on the worker, off the HTTP threads (job_view_worker.h).
  auto worker = std::make_shared<views::JobViewWorker>();
  auto off_http = [ctx, worker](void (*fn)(const JobApiContext&, const Request&, const Responder&)) {
    return [ctx, worker, fn](const Request& request, Responder respond) {
      worker->post(std::move(respond), [ctx, fn, request](const Responder& r) { fn(ctx, request, r); });
    };
  };
  const std::vector<std::string> get = {"GET", "HEAD"};
  router.add("POST", "/api/v1/jobs/{job}/report", bind(post_report));
  router.add("POST", std::string(jobs::kBatchPath), bind(post_report_batch));
  router.add(get, "/api/v1/jobs", off_http(list_jobs));
  router.add(get, "/api/v1/jobs/{job}", off_http(get_job));
  router.add(get, "/api/v1/jobs/{job}/series", off_http(get_series));
  router.add(get, "/api/v1/interruptions", off_http(get_interruptions));
}

namespace {

// Every job's snapshot without its ranks: at most kMaxMetricRanks are copied, by
// detailed_snapshots().
std::vector<JobSnapshot> job_summaries(const jobs::JobRegistry& registry,
                                       const std::function<bool(const std::string&)>& shown_here) {
  std::vector<JobSnapshot> snaps;
  for (const auto& name : registry.names()) {
    if (shown_here && !shown_here(name)) continue;
    if (auto s = registry.snapshot(name, jobs::SnapshotDetail::kNodes)) snaps.push_back(std::move(*s));
  }
  return snaps;
}

void write_refusals(const jobs::JobRegistry& registry, PrometheusWriter& w) {
  const jobs::IngestRefusals refused = registry.refusals();
  w.family("trainwatch_job_reports_refused_total", "counter",
           "Node reports refused at a bound, by the bound.");
  w.sample("trainwatch_job_reports_refused_total", {{"bound", "max_ranks"}},
           static_cast<double>(refused.too_many_ranks));
  w.sample("trainwatch_job_reports_refused_total", {{"bound", "max_ranks_per_node"}},
           static_cast<double>(refused.too_many_ranks_on_node));
  w.sample("trainwatch_job_reports_refused_total", {{"bound", "max_nodes"}},
           static_cast<double>(refused.too_many_nodes));
  w.sample("trainwatch_job_reports_refused_total", {{"bound", "max_auto_jobs"}},
           static_cast<double>(refused.too_many_jobs));
  w.family("trainwatch_jobs_expired_total", "counter",
           "Auto-created jobs released after jobs.expire_after without a report.");
  w.sample("trainwatch_jobs_expired_total", {}, static_cast<double>(registry.expired()));
}

// Ranks by health, reports received and current findings, by job.
void write_job_counts(const std::vector<JobSnapshot>& snaps, PrometheusWriter& w) {
  w.family("trainwatch_job_ranks", "gauge", "Ranks by health (the dashboard's grid word), by job.");
  for (const auto& s : snaps) {
    for (const auto& [health, count] : s.rank_summary.counts) {
      w.sample("trainwatch_job_ranks",
               {{"training_job", s.state->name()}, {"health", std::string(jobs::to_string(health))}},
               static_cast<double>(count));
    }
  }
  w.family("trainwatch_job_reports_total", "counter", "Node reports received, by job.");
  for (const auto& s : snaps)
    w.sample("trainwatch_job_reports_total", {{"training_job", s.state->name()}},
             static_cast<double>(s.state->reports()));
  // One series a job: its culprit's labels while it is down (jobs/culprit_labels.h), so one
  // alert names the rank that failed however many ranks fell with it.
  w.family("trainwatch_job_down", "gauge",
           "1 while the job's verdict is down, labelled with the culprit's reason, rank and node; else 0.");
  for (const auto& s : snaps) {
    const bool down = s.verdict->down && !s.verdict->findings.empty();
    const auto culprit = down ? jobs::culprit_labels(s.verdict->findings.front())
                              : std::vector<std::pair<std::string, std::string>>{};
    Labels labels{{"training_job", s.state->name()}};
    for (const auto& [name, value] : culprit) labels.emplace_back(name, value);
    w.sample("trainwatch_job_down", labels, down ? 1.0 : 0.0);
  }
  w.family("trainwatch_job_findings", "gauge", "Current findings, by job and severity.");
  for (const auto& s : snaps) {
    double down = 0, warning = 0;
    for (const auto& f : s.verdict->findings) ++(f.severity == jobs::Severity::kDown ? down : warning);
    w.sample("trainwatch_job_findings", {{"training_job", s.state->name()}, {"severity", "down"}}, down);
    w.sample("trainwatch_job_findings", {{"training_job", s.state->name()}, {"severity", "warning"}},
             warning);
  }
}

// Each job's interruption ledger and goodput, then the installation's GPU time lost.
void write_interruptions(const jobs::JobRegistry& registry, const std::vector<JobSnapshot>& snaps,
                         PrometheusWriter& w) {
  w.family("trainwatch_job_interruptions_total", "counter",
           "Times each job stopped training, by classified cause (the interruption ledger).");
  w.family(
      "trainwatch_job_goodput_ratio", "gauge",
      "Share of each job's wall time whose training was kept (not lost to detection, restart or recomputation).");
  for (const auto& s : snaps) {
    // Every cause from zero, so that increase() counts a cause's first interruption too.
    const auto& totals = s.ledger->totals();
    for (int k = 0; k <= static_cast<int>(jobs::InterruptionKind::kOther); ++k) {
      const auto kind = static_cast<jobs::InterruptionKind>(k);
      const auto t = totals.find(kind);
      w.sample("trainwatch_job_interruptions_total",
               {{"training_job", s.state->name()}, {"cause", std::string(jobs::to_string(kind))}},
               t == totals.end() ? 0.0 : static_cast<double>(t->second.count));
    }
    w.sample("trainwatch_job_goodput_ratio", {{"training_job", s.state->name()}},
             s.ledger->goodput(*s.state, s.at).ratio);
  }
  // In GPU-seconds, Prometheus' base unit (promtool refuses _hours): divide by 3600 for the
  // GPU-hours the API and the job page show.
  w.family("trainwatch_interruption_gpu_seconds_lost_total", "counter",
           "GPU-seconds lost to closed interruptions of every job, by cause (one GPU a rank).");
  const auto lost = registry.interruption_totals();
  for (int k = 0; k <= static_cast<int>(jobs::InterruptionKind::kOther); ++k) {
    const auto kind = static_cast<jobs::InterruptionKind>(k);
    const auto t = lost.find(kind);
    w.sample("trainwatch_interruption_gpu_seconds_lost_total",
             {{"cause", std::string(jobs::to_string(kind))}},
             t == lost.end() ? 0.0 : t->second.gpu_hours_lost * 3600.0);
  }
}

void write_timeouts_and_report_ages(const std::vector<JobSnapshot>& snaps, PrometheusWriter& w) {
  w.family("trainwatch_job_step_timeout_seconds", "gauge", "The step timeout in force (learned or fixed).");
  for (const auto& s : snaps) {
    w.sample("trainwatch_job_step_timeout_seconds", {{"training_job", s.state->name()}},
             static_cast<double>(s.verdict->timeouts.step.count()) / 1000.0);
  }
  w.family("trainwatch_job_node_last_report_age_seconds", "gauge",
           "Seconds since the node's last report arrived.");
  for (const auto& s : snaps) {
    for (const auto& [name, n] : s.state->nodes()) {
      w.sample("trainwatch_job_node_last_report_age_seconds",
               {{"training_job", s.state->name()}, {"node", name}},
               static_cast<double>(views::snapshot_age_ms(s, n.last_seen)) / 1000.0);
    }
  }
}

// Per rank only for jobs of at most kMaxDetailedRanks ranks (their snapshot carries the
// ranks), and only while the jobs so listed hold at most kMaxMetricRanks ranks together:
// the others are summarised by trainwatch_job_ranks. Jobs go in name order.
std::vector<JobSnapshot> detailed_snapshots(const jobs::JobRegistry& registry,
                                            const std::vector<JobSnapshot>& snaps) {
  std::vector<JobSnapshot> detailed;
  size_t listed = 0;
  for (const auto& s : snaps) {
    if (s.rank_count > jobs::kMaxDetailedRanks || listed + s.rank_count > kMaxMetricRanks) continue;
    auto full = registry.snapshot(s.state->name());
    if (!full || full->ranks_omitted) continue;
    listed += full->rank_count;
    detailed.push_back(std::move(*full));
  }
  return detailed;
}

void write_rank_metrics(const std::vector<JobSnapshot>& detailed, PrometheusWriter& w) {
  struct RankFamily {
    const char* name;
    const char* type;
    const char* help;
    double (*get)(const JobSnapshot&, int, const jobs::RankRecord&);
  };
  static const RankFamily kFamilies[] = {
      {"trainwatch_job_rank_step", "gauge", "Last reported step, by rank.",
       [](const JobSnapshot&, int, const jobs::RankRecord& r) { return static_cast<double>(r.last.step); }},
      {"trainwatch_job_rank_lag_steps", "gauge", "Steps behind the most advanced rank.",
       [](const JobSnapshot& s, int, const jobs::RankRecord& r) {
         return static_cast<double>(jobs::step_lag(r, jobs::JobFront{s.max_step, {}}));
       }},
      {"trainwatch_job_rank_alive", "gauge", "1 while the rank's process exists.",
       [](const JobSnapshot&, int, const jobs::RankRecord& r) { return r.last.alive ? 1.0 : 0.0; }},
      {"trainwatch_job_rank_last_step_age_seconds", "gauge",
       "Seconds since the rank's last step, on the server's clock.",
       [](const JobSnapshot& s, int, const jobs::RankRecord& r) {
         return r.last_step_at ? static_cast<double>(views::snapshot_age_ms(s, *r.last_step_at)) / 1000.0
                               : -1.0;
       }},
      // Counted by the rank's library since its process started (0 when too old to count).
      {"trainwatch_job_rank_nonfinite_losses_total", "counter", "Steps that reported a NaN or infinite loss.",
       [](const JobSnapshot&, int, const jobs::RankRecord& r) {
         return static_cast<double>(r.last.nonfinite_total.value_or(0));
       }},
  };
  for (const auto& fam : kFamilies) {
    w.family(fam.name, fam.type, fam.help);
    for (const JobSnapshot& s : detailed) {
      for (const auto& [rank, r] : s.state->ranks()) {
        std::string rank_text = std::to_string(rank);
        w.sample(fam.name, {{"training_job", s.state->name()}, {"rank", rank_text}, {"node", r.node}},
                 fam.get(s, rank, r));
      }
    }
  }
}

}  // namespace

void write_intake_metrics(const jobs::ReportIntake& intake, PrometheusWriter& w) {
  w.family("trainwatch_job_reports_applied_total", "counter",
           "Node reports this process applied: taken from an agent, or handed to it by another replica.");
  w.sample("trainwatch_job_reports_applied_total", {}, static_cast<double>(intake.applied()));
  w.family("trainwatch_job_reports_handed_on_total", "counter",
           "Node reports this replica took for a job it does not hold, and handed to the replicas that do.");
  w.sample("trainwatch_job_reports_handed_on_total", {}, static_cast<double>(intake.handed_on()));
}

std::string render_job_metrics(const jobs::JobRegistry& registry,
                               const std::function<bool(const std::string&)>& shown_here) {
  const std::vector<JobSnapshot> snaps = job_summaries(registry, shown_here);
  PrometheusWriter w;
  write_refusals(registry, w);
  write_job_counts(snaps, w);
  write_interruptions(registry, snaps, w);
  write_timeouts_and_report_ages(snaps, w);
  write_rank_metrics(detailed_snapshots(registry, snaps), w);
  return w.take();
}

}  // namespace trainwatch::api
