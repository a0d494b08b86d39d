// Node reports through a real SQLite store: what one replica takes, another applies; what
// a server took before it stopped, it applies again when it starts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "fakes/manual_clock.h"
#include "jobs/job_journal.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::jobs {
namespace {

namespace fs = std::filesystem;
using testing::ManualClock;

std::string body(const std::string& node, int rank, int64_t step, bool alive = true) {
  return R"({"schema":1,"node":")" + node + R"(","report_every_ms":5000,"ranks":[{"rank":)" +
         std::to_string(rank) + R"(,"pid":100,"alive":)" + (alive ? "true" : "false") +
         R"(,"status":"training","step":)" + std::to_string(step) + R"(,"step_reports":)" +
         std::to_string(step + 1) + R"(,"last_step_age_ms":0}]})";
}

// One server: a registry, a journal on the shared store, and the jobs it was told about.
struct Replica {
  Replica(Store& store, const Clock& clock, const std::string& id) : registry(clock) {
    Config config;
    config.jobs.auto_create = true;
    registry.configure(config);
    journal = std::make_unique<JobJournal>(store, registry, clock, id,
                                           [this](const std::string& job) { created.push_back(job); });
  }
  // A report this replica took: applied and saved (ReportIntake's order is its own test's).
  void take(const std::string& job, const std::string& report_body) {
    auto report = parse_node_report(report_body);
    ASSERT_TRUE(report.ok()) << report.error().message;
    registry.ingest(job, *report);
    std::promise<Status> saved;
    ASSERT_TRUE(journal->save(job, report->node, report_body, [&](const Status& s) { saved.set_value(s); }));
    ASSERT_TRUE(saved.get_future().get().ok());
  }
  std::vector<std::string> nodes(const std::string& job) const {
    std::vector<std::string> out;
    if (auto s = registry.snapshot(job)) {
      for (const auto& [name, n] : s->state->nodes()) out.push_back(name);
    }
    return out;
  }

  JobRegistry registry;
  std::unique_ptr<JobJournal> journal;
  std::vector<std::string> created;
};

class JobJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-journal-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = sqlite::SqliteStore::open((dir_ / "trainwatch.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  fs::path dir_;
  ManualClock clock_;
  std::unique_ptr<Store> store_;
};

TEST_F(JobJournalTest, AJobWhoseNodesReportToTwoReplicasIsWholeOnBoth) {
  Replica a(*store_, clock_, "a");
  Replica b(*store_, clock_, "b");
  a.take("llama", body("node-a", 0, 10));
  b.take("llama", body("node-b", 1, 10));
  clock_.advance(Millis(400));
  ASSERT_EQ(*a.journal->follow(), 1u) << "only node-b's report is new to a";
  ASSERT_EQ(*b.journal->follow(), 1u);
  EXPECT_EQ(a.nodes("llama"), (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_EQ(b.nodes("llama"), (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_TRUE(a.created.empty()) << "a created the job when node-a reported";

  // node-b's report is dated when b took it, 400 ms ago, not when a read it.
  const auto node_b = a.registry.snapshot("llama")->state->nodes().at("node-b");
  EXPECT_EQ(clock_.monotonic_time() - node_b.last_seen, Millis(400));

  // A rank that dies on node-b is seen by a, which may be the one checking the job.
  clock_.advance(Millis(1'000));
  b.take("llama", body("node-b", 1, 11, /*alive=*/false));
  ASSERT_EQ(*a.journal->follow(), 1u);
  a.registry.evaluate(a.registry.auto_monitor("llama"));
  auto verdict = a.registry.snapshot("llama")->verdict;
  ASSERT_TRUE(verdict->down);
  EXPECT_NE(verdict->cause.find("rank 1"), std::string::npos) << verdict->cause;
  EXPECT_EQ(*a.journal->follow(), 0u) << "nothing new";
}

TEST_F(JobJournalTest, AReplicaThatNeverSawAJobCreatesItsMonitorFromAStoredReport) {
  Replica a(*store_, clock_, "a");
  Replica b(*store_, clock_, "b");
  a.take("fresh", body("node-a", 0, 1));
  ASSERT_EQ(*b.journal->follow(), 1u);
  EXPECT_EQ(b.created, std::vector<std::string>{"fresh"});
}

TEST_F(JobJournalTest, ARestartedServerResumesItsJobsAndLeavesReleasedOnesOut) {
  {
    Replica before(*store_, clock_, "");
    before.take("old", body("node-a", 0, 5));
    clock_.advance(Millis(3'600'000));
    before.take("llama", body("node-a", 0, 10));
    before.take("llama", body("node-b", 1, 10));
  }
  clock_.advance(Millis(120'000));  // the server was down for two minutes
  Replica after(*store_, clock_, "");
  ASSERT_EQ(*after.journal->restore(Millis(1'800'000)), 2u) << "the old job's report is past expire_after";
  EXPECT_EQ(after.created, std::vector<std::string>{"llama"});
  EXPECT_EQ(after.nodes("llama"), (std::vector<std::string>{"node-a", "node-b"}));
  EXPECT_FALSE(after.registry.snapshot("old"));
  // The downtime is not the nodes' silence: no node is silent at the first tick.
  const CheckResult first = after.registry.evaluate(after.registry.auto_monitor("llama"));
  EXPECT_TRUE(first.ok) << first.cause;
}

}  // namespace
}  // namespace trainwatch::jobs
