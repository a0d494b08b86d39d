// The intake's order: a report is checked, stored, and applied only once the store
// committed it; a report the store refuses is answered 503 and never applied.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <optional>

#include "fakes/fake_store.h"
#include "fakes/manual_clock.h"
#include "jobs/report_intake.h"
#include "storage/store_errors.h"

namespace trainwatch::jobs {
namespace {

using testing::FakeStore;
using testing::ManualClock;

std::string body(const std::string& node, int first_rank, int ranks = 1) {
  std::string out = R"({"schema":1,"node":")" + node + R"(","report_every_ms":5000,"ranks":[)";
  for (int r = first_rank; r < first_rank + ranks; ++r) {
    if (r > first_rank) out += ",";
    out += R"({"rank":)" + std::to_string(r) +
           R"(,"pid":100,"alive":true,"status":"training","step":7,"step_reports":8,"last_step_age_ms":0})";
  }
  return out + "]}";
}

class ReportIntakeTest : public ::testing::Test {
 protected:
  explicit ReportIntakeTest(int max_ranks_per_node = 1'024) : registry_(clock_) {
    Config config;
    config.jobs.auto_create = true;
    config.jobs.max_ranks_per_node = max_ranks_per_node;
    registry_.configure(config);
  }

  // Submits a report and returns its answer, which may come later (on the apply thread).
  std::future<IntakeAnswer> submit(const std::string& job, const std::string& report_body,
                                   std::string_view authorization = "", std::string_view from = "10.0.0.1") {
    auto answer = std::make_shared<std::promise<IntakeAnswer>>();
    intake_.submit(job, ReportIntake::Sender{authorization, from, ""}, report_body,
                   [answer](IntakeAnswer a) { answer->set_value(std::move(a)); });
    return answer->get_future();
  }
  static bool answered(const std::future<IntakeAnswer>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  static IntakeAnswer await(std::future<IntakeAnswer>& f) {
    EXPECT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return f.get();
  }
  std::vector<std::string> nodes(const std::string& job) const {
    std::vector<std::string> out;
    if (auto s = registry_.snapshot(job)) {
      for (const auto& [name, n] : s->state->nodes()) out.push_back(name);
    }
    return out;
  }

  ManualClock clock_;
  FakeStore store_;
  JobRegistry registry_;
  JobJournal journal_{store_, registry_, clock_, "", {}};
  std::shared_ptr<auth::ReloadableSecret> token_ = std::make_shared<auth::ReloadableSecret>();
  auth::CredentialGate guesses_{clock_};
  std::vector<std::string> created_;
  ReportIntake intake_{registry_, journal_, token_, guesses_,
                       [this](const std::string& job) { created_.push_back(job); }};
};

TEST_F(ReportIntakeTest, AReportIsAppliedOnlyOnceTheStoreCommittedIt) {
  auto answer = submit("train", body("n1", 0));
  ASSERT_EQ(store_.waiting(), 1u);
  ASSERT_NE(store_.front<SaveNodeReport>(), nullptr);
  // Stored but not yet committed: no job, no answer.
  EXPECT_FALSE(registry_.snapshot("train").has_value());
  EXPECT_FALSE(answered(answer));

  ASSERT_TRUE(store_.answer(Ok{}));
  IntakeAnswer a = await(answer);
  EXPECT_EQ(a.status, 200) << a.detail;
  EXPECT_NE(a.body.find(R"("accepted":true)"), std::string::npos) << a.body;
  EXPECT_EQ(nodes("train"), std::vector<std::string>{"n1"});
  EXPECT_EQ(created_, std::vector<std::string>{"train"});
}

TEST_F(ReportIntakeTest, AReportTheStoreRefusesIsAnswered503AndNeverApplied) {
  auto first = submit("train", body("n1", 0));
  ASSERT_TRUE(store_.answer(Ok{}));
  ASSERT_EQ(await(first).status, 200);

  auto refused = submit("train", body("n2", 1));
  ASSERT_TRUE(store_.answer(make_error(store_error::kUnavailable, "database or disk is full")));
  IntakeAnswer a = await(refused);
  EXPECT_EQ(a.status, 503);
  EXPECT_NE(a.detail.find("database or disk is full"), std::string::npos) << a.detail;
  EXPECT_NE(a.detail.find("not applied"), std::string::npos) << a.detail;
  EXPECT_EQ(nodes("train"), std::vector<std::string>{"n1"});  // n2 is nowhere
}

TEST_F(ReportIntakeTest, AReportThatCreatesNoJobWhenRefusedLeavesNoJob) {
  auto refused = submit("fresh", body("n1", 0));
  ASSERT_TRUE(store_.answer(make_error(store_error::kUnavailable, "disk I/O error")));
  EXPECT_EQ(await(refused).status, 503);
  EXPECT_FALSE(registry_.snapshot("fresh").has_value());
  EXPECT_TRUE(registry_.names().empty());
  EXPECT_TRUE(created_.empty());
}

TEST_F(ReportIntakeTest, AWrongTokenIsAnswered401AndNothingIsStored) {
  token_->set("s3cret");
  auto none = submit("train", body("n1", 0));
  auto wrong = submit("train", body("n1", 0), "Bearer nope");
  for (auto* f : {&none, &wrong}) {
    ASSERT_TRUE(answered(*f));  // at once, on the caller's thread
    IntakeAnswer a = f->get();
    EXPECT_EQ(a.status, 401);
    EXPECT_TRUE(a.bearer_challenge);
  }
  EXPECT_EQ(store_.waiting(), 0u);

  auto right = submit("train", body("n1", 0), "Bearer s3cret");
  ASSERT_TRUE(store_.answer(Ok{}));
  EXPECT_EQ(await(right).status, 200);
}

TEST_F(ReportIntakeTest, WrongTokensAreThrottledPerAddressInTheAgentsRealmOfTheServersGuessThrottle) {
  token_->set("s3cret");
  for (int i = 0; i < 10; ++i) {
    auto wrong = submit("train", body("n1", 0), "Bearer guess-" + std::to_string(i));
    ASSERT_TRUE(answered(wrong));
    EXPECT_EQ(wrong.get().status, 401) << i;
  }
  // Out of attempts: even the right token is not looked at, and the answer says how long.
  auto held = submit("train", body("n1", 0), "Bearer s3cret");
  ASSERT_TRUE(answered(held));
  const IntakeAnswer a = held.get();
  EXPECT_EQ(a.status, 429);
  EXPECT_GT(a.retry_after.count(), 0);
  EXPECT_EQ(store_.waiting(), 0u);
  // The server's one throttle, in the agents' realm: a person at that address is not held.
  EXPECT_EQ(
      guesses_.attempt(auth::CredentialKind::kBearer, "10.0.0.1", "token:any", [] { return true; }).verdict,
      auth::GateVerdict::kAccepted);

  // Another address is not held back; this one is let in once its wait has passed.
  auto other = submit("train", body("n1", 0), "bearer s3cret", "10.0.0.2");
  ASSERT_TRUE(store_.answer(Ok{}));
  EXPECT_EQ(await(other).status, 200);
  clock_.advance(a.retry_after);
  auto later = submit("train", body("n1", 0), "Bearer s3cret");
  ASSERT_TRUE(store_.answer(Ok{}));
  EXPECT_EQ(await(later).status, 200);
}

TEST_F(ReportIntakeTest, AnUnreadableReportIsAnswered400AndNothingIsStored) {
  auto a = submit("train", "{not json");
  ASSERT_TRUE(answered(a));
  EXPECT_EQ(a.get().status, 400);
  auto misdirected = submit("train", R"({"schema":1,"job":"other","node":"n1","ranks":[]})");
  ASSERT_TRUE(answered(misdirected));
  EXPECT_EQ(misdirected.get().status, 400);
  EXPECT_EQ(store_.waiting(), 0u);
  EXPECT_FALSE(registry_.snapshot("train").has_value());
}

class ReportIntakeBoundsTest : public ReportIntakeTest {
 protected:
  ReportIntakeBoundsTest() : ReportIntakeTest(2) {}
};

TEST_F(ReportIntakeBoundsTest, AReportPastABoundIsAnswered422AndNothingIsStored) {
  auto a = submit("train", body("n1", 0, 3));
  ASSERT_TRUE(answered(a));
  IntakeAnswer answer = a.get();
  EXPECT_EQ(answer.status, 422);
  EXPECT_NE(answer.detail.find("jobs.max_ranks_per_node"), std::string::npos) << answer.detail;
  EXPECT_EQ(store_.waiting(), 0u);
  EXPECT_FALSE(registry_.snapshot("train").has_value());
  EXPECT_EQ(registry_.refusals().too_many_ranks_on_node, 1u);
}

// The other replicas, as a test sees them: who holds which job, and every request sent,
// answered at once with `answer` (or an error when it is unset).
class FakePeers final : public JobPeers {
 public:
  JobHolding holding(const std::string& job) const override {
    auto it = holdings.find(job);
    return it == holdings.end() ? JobHolding{} : it->second;
  }
  std::vector<std::string> everyone_else() const override { return {}; }
  void send(std::vector<std::string>, PeerRequest, PeerDone done) override {
    done(make_error("peers.unexpected", "the intake reads nothing"));
  }
  void send_report(std::vector<std::string> addresses, PeerReport report, PeerReportDone done) override {
    sent.emplace_back(std::move(addresses), std::move(report));
    done(answer);
  }

  std::map<std::string, JobHolding> holdings;
  BatchedAnswer answer{200, R"({"accepted":true})"};
  std::vector<std::pair<std::vector<std::string>, PeerReport>> sent;
};

class ReplicaIntakeTest : public ReportIntakeTest {
 protected:
  ReplicaIntakeTest() {
    peers_.holdings["theirs"] = JobHolding{false, {"owner:1", "standby:2"}, false};
    peers_.holdings["ours"] = JobHolding{true, {"standby:2"}, true};
  }
  std::future<IntakeAnswer> submit_hop(const std::string& job, const std::string& report_body,
                                       std::string_view hop) {
    auto answer = std::make_shared<std::promise<IntakeAnswer>>();
    replica_intake_.submit(job, ReportIntake::Sender{"Bearer s3cret", "10.0.0.9", hop}, report_body,
                           [answer](IntakeAnswer a) { answer->set_value(std::move(a)); });
    return answer->get_future();
  }

  FakePeers peers_;
  ReportIntake replica_intake_{registry_, journal_, token_, guesses_, {}, &peers_};
};

TEST_F(ReplicaIntakeTest, AReportForAJobHeldElsewhereGoesToItsHoldersAsItCameAndTheirAnswerIsTheAnswer) {
  token_->set("s3cret");
  auto answer = submit_hop("theirs", body("n1", 0), "");
  IntakeAnswer a = await(answer);
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(a.body, R"({"accepted":true})");
  ASSERT_EQ(peers_.sent.size(), 1u);
  EXPECT_EQ(peers_.sent[0].first, (std::vector<std::string>{"owner:1", "standby:2"})) << "the owner first";
  EXPECT_EQ(peers_.sent[0].second.job, "theirs");
  EXPECT_EQ(peers_.sent[0].second.body, body("n1", 0));
  EXPECT_EQ(peers_.sent[0].second.authorization, "Bearer s3cret");
  EXPECT_EQ(peers_.sent[0].second.hop, kHopForwarded);
  EXPECT_EQ(store_.waiting(), 0u) << "nothing stored here";
  EXPECT_FALSE(registry_.snapshot("theirs").has_value()) << "nothing applied here";
  EXPECT_EQ(replica_intake_.applied(), 0u);
  EXPECT_EQ(replica_intake_.handed_on(), 1u);

  peers_.sent.clear();
  token_->set("other");
  auto refused = submit_hop("theirs", body("n1", 0), "");
  EXPECT_EQ(await(refused).status, 401);
  EXPECT_TRUE(peers_.sent.empty()) << "a report without the token is never handed on";
}

TEST_F(ReplicaIntakeTest, WhenNoHolderAnswersTheAgentHears503AndNothingIsApplied) {
  peers_.answer = {503, "no replica that holds job 'theirs' answered (owner:1: connection refused)"};
  auto answer = submit_hop("theirs", body("n1", 0), "");
  IntakeAnswer a = await(answer);
  EXPECT_EQ(a.status, 503);
  EXPECT_NE(a.detail.find("no replica that holds job 'theirs' answered"), std::string::npos) << a.detail;
  EXPECT_NE(a.detail.find("send the next report as usual"), std::string::npos) << a.detail;
  EXPECT_FALSE(registry_.snapshot("theirs").has_value());
}

TEST_F(ReplicaIntakeTest, AHolderAppliesAReportAtOnceWithoutAStoreWriteAndRelaysItToTheOtherHolderOnce) {
  auto taken = submit_hop("ours", body("n1", 0), "");
  EXPECT_EQ(await(taken).status, 200);
  EXPECT_EQ(nodes("ours"), std::vector<std::string>{"n1"});
  EXPECT_EQ(store_.waiting(), 0u) << "written with the job's state, not per report";
  ASSERT_EQ(peers_.sent.size(), 1u);
  EXPECT_EQ(peers_.sent[0].first, std::vector<std::string>{"standby:2"});
  EXPECT_EQ(peers_.sent[0].second.hop, kHopRelayed);

  // The other holder's relay, and a report another replica handed on: applied; only the
  // handed-on one goes to the other holder.
  auto relayed = submit_hop("ours", body("n2", 1), kHopRelayed);
  EXPECT_EQ(await(relayed).status, 200);
  EXPECT_EQ(peers_.sent.size(), 1u) << "a relayed report is not relayed back";
  auto forwarded = submit_hop("ours", body("n3", 2), kHopForwarded);
  EXPECT_EQ(await(forwarded).status, 200);
  EXPECT_EQ(peers_.sent.size(), 2u);
  EXPECT_EQ(nodes("ours"), (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(replica_intake_.applied(), 3u);

  // A report handed on for a job this replica does not hold (the replicas' views of the
  // members differ for a beat) is applied where it arrived, never sent round again.
  auto stray = submit_hop("theirs", body("n1", 0), kHopForwarded);
  EXPECT_EQ(await(stray).status, 200);
  EXPECT_EQ(peers_.sent.size(), 2u);
}

TEST_F(ReplicaIntakeTest, TheKeptStateIsWrittenByTheOwnerOncePerRoundAndSoonerAfterItsMemoChanged) {
  for (int round = 0; round < 3; ++round) {
    auto a = submit_hop("ours", body("n1", 0), "");
    auto b = submit_hop("ours", body("n2", 1), "");
    ASSERT_EQ(await(a).status, 200);
    ASSERT_EQ(await(b).status, 200);
    clock_.advance(Millis(5'000));
  }
  auto mine = [](const std::string&) { return true; };
  EXPECT_EQ(journal_.write_kept(mine, mine), 0u) << "15 s: not yet a round";
  EXPECT_EQ(journal_.write_kept([](const std::string&) { return false; }, mine), 0u);
  clock_.advance(JobJournal::kWriteEvery);
  EXPECT_EQ(journal_.write_kept([](const std::string&) { return false; }, mine), 0u)
      << "the standby keeps its copy for when it owns the job";
  EXPECT_EQ(journal_.write_kept(mine, mine), 2u) << "six reports, one row for each of the two nodes";
  EXPECT_EQ(store_.waiting(), 2u);
  const auto* row = store_.front<SaveNodeReport>();
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->body, body("n1", 0));

  auto c = submit_hop("ours", body("n1", 0), "");
  ASSERT_EQ(await(c).status, 200);
  EXPECT_EQ(journal_.write_kept(mine, mine), 0u);
  journal_.save_memo("ours", "{}");  // a launch, an interruption: the verdict changed
  EXPECT_EQ(journal_.write_kept(mine, mine), 0u) << "written a moment ago";
  clock_.advance(JobJournal::kMinWriteGap);
  EXPECT_EQ(journal_.write_kept(mine, mine), 1u) << "sooner than a round";
  EXPECT_EQ(journal_.write_kept(mine, [](const std::string&) { return false; }), 0u)
      << "a job no longer held here is dropped";
}

}  // namespace
}  // namespace trainwatch::jobs
