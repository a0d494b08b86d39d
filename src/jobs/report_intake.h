// ReportIntake: one node report, from the agent's POST to its answer, in the engine's
// order: show only what is committed.
//
//   1. check     size, bearer token, job name, body (report.h), then the registry's bounds
//                (JobRegistry::admit): 413, 401, 400, 404, 429 and 422 are answered here,
//                and nothing is stored or applied. The token is read by the API's reader
//                (auth/bearer_token.h) and checked through the server's guess throttle
//                (auth/credential_gate.h): wrong ones count against the sending address as
//                wrong API tokens do, and an address out of attempts is answered 429 with
//                its wait, its token unchecked.
//   2. store     the raw body goes to the store (JobJournal::save).
//   3. apply     once it is committed, and only then, the report is applied to the job
//                (JobRegistry::ingest) on the intake's own thread, and the agent hears
//                200. A report the store refused (full disk, queue full, a vanished file)
//                is answered 503 and never applied: no page, API or check shows it.
//
// Why this order: a report applied before it is stored shows the job a state that a
// restart or another replica never sees, and the agent, told 503, sends it again.
//
// Replicas (a JobPeers): a job is held by two replicas, its owner and its standby
// (job_peers.h), and its reports take another way:
//   - a replica that does not hold the job checks the token and hands the report on as
//     it came, to the owner, else the standby, and answers what they answer (503 when
//     neither does); it applies nothing;
//   - a holder checks the report (step 1), applies it at once, keeps its body for the
//     job's next written state (JobJournal::keep, written by the owner every
//     JobJournal::kWriteEvery and on each change of the job's memo), hands it to the other
//     holder, and answers 200. There the report's copy in the standby's memory is what
//     survives the owner; the store holds the job's state for a restart of both, at
//     most kWriteEvery old (docs/operations.md says what a takeover can lose).
//
// Bound: at most kMaxPending reports between step 2 and their answer; one more is answered
// 503 at once (the agent sends its next report as usual), so a slow store cannot grow the
// store's queue or the apply thread's with reports.
//
// Threading: submit() from any thread (the HTTP threads). `done` runs on the calling
// thread for an answer from step 1, else on the intake's apply thread (or a JobPeers
// thread, for a report handed on). The registry and the journal must outlive the intake;
// destroy it only after the store is flushed (no save's callback still to come), which
// joins the apply thread after what it holds.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "auth/credential_gate.h"
#include "auth/reloadable_secret.h"
#include "jobs/job_journal.h"
#include "jobs/job_peers.h"
#include "jobs/job_registry.h"

namespace trainwatch::jobs {

// What the agent hears: 200 with `body` (JSON), or a problem with `detail`. A report
// handed to the replicas that hold its job gets their answer.
struct IntakeAnswer {
  int status = 200;
  std::string detail;             // a problem's words, for any status but 200
  std::string body;               // the JSON of a 200
  bool bearer_challenge = false;  // a 401: the answer says which scheme (WWW-Authenticate)
  Millis retry_after{};           // a 429 of the guess throttle: how long the address waits
};
using IntakeDone = std::function<void(IntakeAnswer)>;

class ReportIntake {
 public:
  static constexpr int kMaxPending = 1024;

  // `token`: the one agents must send (empty: none is asked); replaced on SIGHUP.
  // `guesses`: the server's guess throttle, which every token check goes through.
  // `on_created`: a report created an auto-created job, which needs its monitor
  // (JobRegistry::auto_monitor); called on the apply thread.
  // `peers`: the other replicas; null for a lone server.
  ReportIntake(JobRegistry& registry, JobJournal& journal,
               std::shared_ptr<const auth::ReloadableSecret> token, auth::CredentialGate& guesses,
               std::function<void(const std::string& job)> on_created, JobPeers* peers = nullptr);
  ~ReportIntake();
  ReportIntake(const ReportIntake&) = delete;
  ReportIntake& operator=(const ReportIntake&) = delete;

  // What a report came with, besides its body.
  struct Sender {
    std::string_view authorization;   // the Authorization header, "" when it had none
    std::string_view remote_address;  // the TCP peer: an agent, or a replica handing it on
    std::string_view hop;             // the kHopHeader (job_peers.h), "" from an agent
  };
  void submit(const std::string& job, const Sender& sender, std::string body, IntakeDone done);

  // Reports this process applied (taken, handed to it, or relayed to it), and those it
  // handed to the replicas holding their job: /metrics shows both, per replica.
  uint64_t applied() const { return applied_.load(std::memory_order_relaxed); }
  uint64_t handed_on() const { return handed_on_.load(std::memory_order_relaxed); }

 private:
  // Step 1 up to the body: size, token and job name; nullopt when they pass.
  std::optional<IntakeAnswer> gate(const std::string& job, const Sender& sender, const std::string& body);
  // The bearer token against `token`, through the guess throttle; nullopt when it is right.
  std::optional<IntakeAnswer> token_refusal(const Sender& sender, std::string_view token);
  // Step 1's rest: the body and the registry's bounds; nullopt when the report may be applied.
  std::optional<IntakeAnswer> refusal(const std::string& job, const std::string& body, NodeReport& report);
  // Replicas: to the holders of a job not held here.
  void hand_on(const std::string& job, std::string_view authorization, std::string body,
               std::vector<std::string> holders, IntakeDone done);
  // Replicas, on a holder: applied at once, kept for the job's written state, relayed.
  void apply_held(const std::string& job, std::shared_ptr<NodeReport> report, std::string body,
                  std::string_view authorization, std::vector<std::string> relay_to, IntakeDone done);
  // Step 3, on the apply thread, once the store answered.
  void apply(const std::string& job, const NodeReport& report, const Status& stored, const IntakeDone& done);
  // The registry's answer to an applied report (200, or a bound a concurrent report took).
  IntakeAnswer applied_answer(const std::string& job, const NodeReport& report, const IngestResult& result);

  JobRegistry& registry_;
  JobJournal& journal_;
  const std::shared_ptr<const auth::ReloadableSecret> token_;
  auth::CredentialGate& guesses_;
  const std::function<void(const std::string&)> on_created_;
  JobPeers* const peers_;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> applied_{0}, handed_on_{0};
  boost::asio::thread_pool apply_{1};  // last: joined first, while the rest still exists
};

}  // namespace trainwatch::jobs
