#include "jobs/report_intake.h"

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>
#include <boost/json.hpp>

#include "auth/admin_token_check.h"
#include "auth/bearer_token.h"
#include "core/json_text.h"
#include "core/names.h"

namespace trainwatch::jobs {
namespace {

IntakeAnswer problem(int status, std::string detail) {
  IntakeAnswer a;
  a.status = status;
  a.detail = std::move(detail);
  return a;
}

// The answer to a report the registry refused; nullopt when it took (or would take) it.
std::optional<IntakeAnswer> bound_answer(const std::string& job, const NodeReport& report,
                                         const IngestResult& result) {
  switch (result.outcome) {
    case IngestOutcome::kUnknownJob:
      return problem(404, "no job monitor named '" + job + "' and jobs.auto_create is off");
    case IngestOutcome::kTooManyJobs:
      return problem(429, "the server already watches " + std::to_string(kMaxAutoJobs) +
                              " auto-created jobs; declare this one in the config, or wait until one "
                              "expires (jobs.expire_after)");
    case IngestOutcome::kTooManyNodes:
      return problem(429, "job '" + job + "' already has " + std::to_string(kMaxNodesPerJob) + " nodes");
    case IngestOutcome::kTooManyRanks:
      return problem(422, "job '" + job + "' would have " + std::to_string(result.actual) + " ranks; " +
                              result.bound + " allows " + std::to_string(result.limit) +
                              " (the report was not applied)");
    case IngestOutcome::kTooManyRanksOnNode:
      return problem(422, "node '" + report.node + "' reports " + std::to_string(result.actual) + " ranks; " +
                              result.bound + " allows " + std::to_string(result.limit) +
                              " (the report was not applied)");
    case IngestOutcome::kCreated:
    case IngestOutcome::kAccepted:
    case IngestOutcome::kOutdated: break;  // only a stored report is ever outdated
  }
  return std::nullopt;
}

}  // namespace

ReportIntake::ReportIntake(JobRegistry& registry, JobJournal& journal,
                           std::shared_ptr<const auth::ReloadableSecret> token, auth::CredentialGate& guesses,
                           std::function<void(const std::string& job)> on_created, JobPeers* peers)
    : registry_(registry),
      journal_(journal),
      token_(std::move(token)),
      guesses_(guesses),
      on_created_(std::move(on_created)),
      peers_(peers) {}

ReportIntake::~ReportIntake() { apply_.join(); }

std::optional<IntakeAnswer> ReportIntake::gate(const std::string& job, const Sender& sender,
                                               const std::string& body) {
  if (body.size() > kMaxReportBytes) {
    return problem(413, "the report is " + std::to_string(body.size()) + " bytes; at most " +
                            std::to_string(kMaxReportBytes) + " are accepted");
  }
  if (const std::string token = token_ ? token_->get() : std::string(); !token.empty()) {
    if (auto refused = token_refusal(sender, token)) return refused;
  }
  if (std::string why = name_problem(job); !why.empty())
    return problem(400, "job name '" + job + "': " + why);
  return std::nullopt;
}

std::optional<IntakeAnswer> ReportIntake::token_refusal(const Sender& sender, std::string_view token) {
  const auto presented = auth::bearer_token(sender.authorization);
  if (!presented) {
    IntakeAnswer a = problem(401, "a bearer token is required (jobs.token or TRAINWATCH_TOKEN)");
    a.bearer_challenge = true;
    return a;
  }
  const auth::GateResult checked =
      auth::check_secret(guesses_, auth::CredentialKind::kAgent, *presented, token, sender.remote_address);
  switch (checked.verdict) {
    case auth::GateVerdict::kAccepted: return std::nullopt;
    case auth::GateVerdict::kThrottled: {
      // Not looked at, right or wrong: this address used up its own attempts.
      IntakeAnswer a = problem(429, "too many wrong tokens from this address");
      a.retry_after = checked.retry_after;
      return a;
    }
    case auth::GateVerdict::kRefused: break;
  }
  IntakeAnswer a = problem(401, "the bearer token is not the server's");
  a.bearer_challenge = true;
  return a;
}

std::optional<IntakeAnswer> ReportIntake::refusal(const std::string& job, const std::string& body,
                                                  NodeReport& report) {
  auto parsed = parse_node_report(body);
  if (!parsed) return problem(400, parsed.error().message);
  if (!parsed->job.empty() && parsed->job != job) {
    return problem(400, "job: the report is for '" + parsed->job + "' but was sent to '" + job + "'");
  }
  report = std::move(*parsed);
  return bound_answer(job, report, registry_.admit(job, report));
}

void ReportIntake::submit(const std::string& job, const Sender& sender, std::string body, IntakeDone done) {
  if (auto answer = gate(job, sender, body)) return done(std::move(*answer));
  const std::string_view hop = sender.hop;
  JobHolding holding;
  if (peers_) {
    holding = peers_->holding(job);
    // A report handed on is applied where it arrives, whatever this replica thinks of the
    // job's holders: two replicas disagree only for a beat, and it must not go round.
    if (!holding.here && hop.empty()) {
      return hand_on(job, sender.authorization, std::move(body), std::move(holding.others), std::move(done));
    }
  }
  auto report = std::make_shared<NodeReport>();
  if (auto answer = refusal(job, body, *report)) return done(std::move(*answer));
  if (pending_.fetch_add(1) >= kMaxPending) {
    pending_.fetch_sub(1);
    return done(problem(503, "the server is still storing " + std::to_string(kMaxPending) +
                                 " reports; send the next one as usual"));
  }
  if (peers_) {
    std::vector<std::string> relay_to;
    if (holding.here && hop != kHopRelayed) relay_to = std::move(holding.others);
    return apply_held(job, std::move(report), std::move(body), sender.authorization, std::move(relay_to),
                      std::move(done));
  }
  auto shared_done = std::make_shared<IntakeDone>(std::move(done));
  const std::string node = report->node;
  const bool queued =
      journal_.save(job, node, std::move(body), [this, job, report, shared_done](const Status& stored) {
        // Off the store's writer: applying waits for the job's lock, which an analysis may hold.
        boost::asio::post(apply_, [this, job, report, shared_done, stored] {
          apply(job, *report, stored, *shared_done);
          pending_.fetch_sub(1);
        });
      });
  if (!queued) {
    pending_.fetch_sub(1);
    (*shared_done)(problem(503, "the store's write queue is full; send the next report as usual"));
  }
}

void ReportIntake::hand_on(const std::string& job, std::string_view authorization, std::string body,
                           std::vector<std::string> holders, IntakeDone done) {
  handed_on_.fetch_add(1, std::memory_order_relaxed);
  peers_->send_report(
      std::move(holders),
      PeerReport{job, std::string(kHopForwarded), std::string(authorization), std::move(body)},
      [done = std::move(done)](BatchedAnswer got) {
        if (got.status != 200) {
          if (got.status == 503) got.text += "; send the next report as usual";
          return done(problem(got.status, std::move(got.text)));
        }
        IntakeAnswer ok;
        ok.body = std::move(got.text);
        done(std::move(ok));
      });
}

void ReportIntake::apply_held(const std::string& job, std::shared_ptr<NodeReport> report, std::string body,
                              std::string_view authorization, std::vector<std::string> relay_to,
                              IntakeDone done) {
  // On the apply thread: applying waits for the job's lock, which an analysis may hold.
  boost::asio::post(apply_, [this, job, report = std::move(report), body = std::move(body),
                             authorization = std::string(authorization), relay_to = std::move(relay_to),
                             done = std::move(done)]() mutable {
    const IngestResult result = registry_.ingest(job, *report);
    IntakeAnswer answer = applied_answer(job, *report, result);
    if (answer.status == 200) {
      journal_.keep(job, report->node, body);
      if (!relay_to.empty()) {
        // Only the first: the other holder. A relay that fails costs the other holder this
        // report; the node's next one (a whole state, not a delta) replaces it.
        relay_to.resize(1);
        peers_->send_report(
            std::move(relay_to),
            PeerReport{job, std::string(kHopRelayed), std::move(authorization), std::move(body)},
            [](const BatchedAnswer&) {});
      }
    }
    done(std::move(answer));
    pending_.fetch_sub(1);
  });
}

void ReportIntake::apply(const std::string& job, const NodeReport& report, const Status& stored,
                         const IntakeDone& done) {
  if (!stored) {
    return done(problem(503, "the report was not stored (" + stored.error().message +
                                 "); it was not applied; send the next one as usual"));
  }
  done(applied_answer(job, report, registry_.ingest(job, report)));
}

IntakeAnswer ReportIntake::applied_answer(const std::string& job, const NodeReport& report,
                                          const IngestResult& result) {
  // Stored, but another report took the room admit() saw: this one is refused as it would
  // have been a moment earlier (a restart re-applies it under the same bounds).
  if (auto refused = bound_answer(job, report, result)) return std::move(*refused);
  applied_.fetch_add(1, std::memory_order_relaxed);
  if (result.outcome == IngestOutcome::kCreated) {
    spdlog::info("job {} created by a report from node {}", job, report.node);
    if (on_created_) on_created_(job);
  }
  IntakeAnswer ok;
  ok.body = json_text(boost::json::object{{"job", job}, {"node", report.node}, {"accepted", true}});
  return ok;
}

}  // namespace trainwatch::jobs
