#include "storage/sqlite/sqlite_store.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace trainwatch {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kT0 = 1'700'000'000'000;  // a whole-millisecond epoch time

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-store-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "trainwatch.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<SqliteStore> open_store() {
    auto store = SqliteStore::open(path_);
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    return store.ok() ? std::move(store).value() : nullptr;
  }

  fs::path dir_;
  std::string path_;
};

CheckResult result_at(int64_t at_ms, bool ok = true) {
  CheckResult r;
  r.at = from_unix_ms(at_ms);
  r.ok = ok;
  r.latency_ms = 12.5;
  r.cause = ok ? "" : "connection refused";
  r.http_status = ok ? 200 : 0;
  r.timings = HttpTimings{1.25, 2.5, 3.75, 10.0, 12.5};
  return r;
}

MonitorState up_state(int64_t since_ms) {
  MonitorState s;
  s.status = MonitorStatus::kUp;
  s.since = from_unix_ms(since_ms);
  s.last_check = from_unix_ms(since_ms + 1000);
  s.last_latency_ms = 12.5;
  s.consecutive_failures = 0;
  return s;
}

Incident incident_of(int64_t id, const std::string& monitor, int64_t started_ms) {
  return Incident{id, monitor, from_unix_ms(started_ms), std::nullopt, "timeout after 10s"};
}

// Queues `op` and waits for its done; returns the status it reported.
Status write_and_wait(Store& store, WriteOp op) {
  std::promise<Status> done;
  auto future = done.get_future();
  EXPECT_TRUE(store.write(std::move(op), [&](const Status& s) { done.set_value(s); }));
  return future.get();
}

TEST_F(SqliteStoreTest, RecordResultStoresTheResultAndTheState) {
  auto store = open_store();
  MonitorState state = up_state(kT0);
  state.open_incident_id = 7;
  state.last_error = "was slow";
  state.consecutive_failures = 2;
  ASSERT_TRUE(write_and_wait(*store, RecordResult{"api", result_at(kT0, false), state}).ok());

  auto results = store->results(ResultQuery{"api", std::nullopt, 50});
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  const CheckResult& r = results->front();
  EXPECT_EQ(to_unix_ms(r.at), kT0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.latency_ms, 12.5);
  EXPECT_EQ(r.cause, "connection refused");
  EXPECT_EQ(r.http_status, 0);
  EXPECT_EQ(r.timings.dns_ms, 1.25);
  EXPECT_EQ(r.timings.connect_ms, 2.5);
  EXPECT_EQ(r.timings.tls_ms, 3.75);
  EXPECT_EQ(r.timings.first_byte_ms, 10.0);
  EXPECT_EQ(r.timings.total_ms, 12.5);

  auto states = store->load_states();
  ASSERT_TRUE(states.ok());
  ASSERT_EQ(states->size(), 1u);
  const StoredState& s = states->front();
  EXPECT_EQ(s.monitor, "api");
  EXPECT_EQ(s.state.status, MonitorStatus::kUp);
  EXPECT_EQ(to_unix_ms(s.state.since), kT0);
  ASSERT_TRUE(s.state.last_check.has_value());
  EXPECT_EQ(to_unix_ms(*s.state.last_check), kT0 + 1000);
  EXPECT_EQ(s.state.last_latency_ms, 12.5);
  EXPECT_EQ(s.state.last_error, "was slow");
  EXPECT_EQ(s.state.consecutive_failures, 2);
  EXPECT_EQ(s.state.open_incident_id, 7);
}

TEST_F(SqliteStoreTest, SaveStateReplacesTheStateAndKeepsNullsNull) {
  auto store = open_store();
  ASSERT_TRUE(write_and_wait(*store, SaveState{"db", up_state(kT0)}).ok());
  MonitorState paused;
  paused.status = MonitorStatus::kPaused;
  paused.since = from_unix_ms(kT0 + 5000);
  ASSERT_TRUE(write_and_wait(*store, SaveState{"db", paused}).ok());

  auto states = store->load_states();
  ASSERT_TRUE(states.ok());
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ(states->front().state.status, MonitorStatus::kPaused);
  EXPECT_EQ(to_unix_ms(states->front().state.since), kT0 + 5000);
  EXPECT_FALSE(states->front().state.last_check.has_value());
  EXPECT_FALSE(states->front().state.open_incident_id.has_value());
}

TEST_F(SqliteStoreTest, IncidentsOpenAndClose) {
  auto store = open_store();
  auto first_id = store->next_incident_id();
  ASSERT_TRUE(first_id.ok());
  EXPECT_EQ(*first_id, 1);

  ASSERT_TRUE(write_and_wait(*store, OpenIncident{incident_of(1, "api", kT0)}).ok());
  auto open = store->incident(1);
  ASSERT_TRUE(open.ok());
  ASSERT_TRUE(open->has_value());
  EXPECT_EQ((*open)->monitor, "api");
  EXPECT_EQ(to_unix_ms((*open)->started), kT0);
  EXPECT_FALSE((*open)->ended.has_value());
  EXPECT_EQ((*open)->cause, "timeout after 10s");

  ASSERT_TRUE(write_and_wait(*store, CloseIncident{1, from_unix_ms(kT0 + 60'000)}).ok());
  // A second close keeps the first end time.
  ASSERT_TRUE(write_and_wait(*store, CloseIncident{1, from_unix_ms(kT0 + 90'000)}).ok());
  auto closed = store->incident(1);
  ASSERT_TRUE(closed.ok() && closed->has_value());
  ASSERT_TRUE((*closed)->ended.has_value());
  EXPECT_EQ(to_unix_ms(*(*closed)->ended), kT0 + 60'000);

  auto missing = store->incident(42);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_EQ(*store->next_incident_id(), 2);
}

TEST_F(SqliteStoreTest, AFailedOperationFailsAloneAndTheRestOfItsBatchCommits) {
  auto store = open_store();
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  // Hold the writer inside a done so that the next four operations land in one batch.
  ASSERT_TRUE(store->write(SaveState{"hold", up_state(kT0)}, [released](const Status&) { released.wait(); }));

  std::vector<Status> statuses(4, Status(Ok{}));
  ASSERT_TRUE(
      store->write(OpenIncident{incident_of(5, "api", kT0)}, [&](const Status& s) { statuses[0] = s; }));
  ASSERT_TRUE(
      store->write(OpenIncident{incident_of(5, "db", kT0)}, [&](const Status& s) { statuses[1] = s; }));
  ASSERT_TRUE(store->write(CloseIncident{99, from_unix_ms(kT0)}, [&](const Status& s) { statuses[2] = s; }));
  ASSERT_TRUE(store->write(RecordResult{"api", result_at(kT0), up_state(kT0)},
                           [&](const Status& s) { statuses[3] = s; }));
  release.set_value();
  store->flush();

  EXPECT_TRUE(statuses[0].ok()) << statuses[0].error().message;
  ASSERT_FALSE(statuses[1].ok());
  EXPECT_EQ(statuses[1].error().code, "store.write");
  ASSERT_FALSE(statuses[2].ok());
  EXPECT_EQ(statuses[2].error().code, "store.not_found");
  EXPECT_TRUE(statuses[3].ok());

  auto incident = store->incident(5);
  ASSERT_TRUE(incident.ok() && incident->has_value());
  EXPECT_EQ((*incident)->monitor, "api");
  EXPECT_EQ(store->results(ResultQuery{"api", std::nullopt, 50})->size(), 1u);
}

TEST_F(SqliteStoreTest, TheWalIsCopiedIntoTheDatabaseFileWhileTheStoreRuns) {
  auto store = open_store();
  // About 8 MB of pings in one batch: twice the checkpoint threshold.
  const std::string body(4000, 'x');
  for (int i = 0; i < 2000; ++i) {
    PingRecord r;
    r.monitor = "ckpt";
    r.ping.at = from_unix_ms(kT0 + i);
    r.ping.body = body;
    ASSERT_TRUE(store->write(RecordPing{r}));
  }
  store->flush();
  // The writer never checkpoints; the checkpointer's thread does, soon after the commit.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (fs::file_size(path_) < 4'000'000 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(fs::file_size(path_), 4'000'000u) << "the committed pages are still only in the WAL";
}

TEST_F(SqliteStoreTest, EverythingQueuedSurvivesCloseAndReopen) {
  {
    auto store = open_store();
    ASSERT_TRUE(store->write(RecordResult{"api", result_at(kT0), up_state(kT0)}));
    ASSERT_TRUE(store->write(OpenIncident{incident_of(3, "api", kT0)}));
    ASSERT_TRUE(store->write(CloseIncident{3, from_unix_ms(kT0 + 1)}));
    // No flush: the destructor must drain and commit.
  }
  auto store = open_store();
  ASSERT_EQ(store->load_states()->size(), 1u);
  EXPECT_EQ(store->results(ResultQuery{"api", std::nullopt, 50})->size(), 1u);
  auto incident = store->incident(3);
  ASSERT_TRUE(incident.ok() && incident->has_value());
  EXPECT_TRUE((*incident)->ended.has_value());
  EXPECT_EQ(*store->next_incident_id(), 4);
}

TEST_F(SqliteStoreTest, IncidentsPageNewestFirstAndFilterByMonitor) {
  auto store = open_store();
  for (int64_t id = 1; id <= 10; ++id) {
    ASSERT_TRUE(store->write(OpenIncident{incident_of(id, id % 2 ? "odd" : "even", kT0 + id)}));
  }
  store->flush();

  auto page1 = store->incidents(IncidentQuery{std::nullopt, std::nullopt, 4});
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->size(), 4u);
  EXPECT_EQ(page1->front().id, 10);
  EXPECT_EQ(page1->back().id, 7);
  auto page2 = store->incidents(IncidentQuery{std::nullopt, page1->back().id, 4});
  ASSERT_EQ(page2->size(), 4u);
  EXPECT_EQ(page2->front().id, 6);
  auto page3 = store->incidents(IncidentQuery{std::nullopt, page2->back().id, 4});
  ASSERT_EQ(page3->size(), 2u);
  EXPECT_EQ(page3->back().id, 1);

  auto odd = store->incidents(IncidentQuery{"odd", 9, 10});
  ASSERT_TRUE(odd.ok());
  ASSERT_EQ(odd->size(), 4u);
  for (const Incident& i : *odd) EXPECT_EQ(i.monitor, "odd");
  EXPECT_EQ(odd->front().id, 7);

  EXPECT_TRUE(store->incidents(IncidentQuery{std::nullopt, std::nullopt, 0})->empty());
  EXPECT_TRUE(store->incidents(IncidentQuery{std::nullopt, std::nullopt, -1})->empty());
  EXPECT_TRUE(store->incidents(IncidentQuery{"nobody", std::nullopt, 50})->empty());
}

TEST_F(SqliteStoreTest, ResultsPageNewestFirstPerMonitor) {
  auto store = open_store();
  for (int64_t i = 0; i < 25; ++i) {
    ASSERT_TRUE(store->write(RecordResult{"api", result_at(kT0 + i * 1000), up_state(kT0)}));
    ASSERT_TRUE(store->write(RecordResult{"other", result_at(kT0 + i * 1000), up_state(kT0)}));
  }
  store->flush();

  std::vector<int64_t> seen;
  std::optional<int64_t> before;
  for (;;) {
    auto page = store->results(ResultQuery{"api", before, 10});
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    for (const CheckResult& r : *page) seen.push_back(to_unix_ms(r.at));
    before = to_unix_ms(page->back().at);
  }
  ASSERT_EQ(seen.size(), 25u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], kT0 + (24 - static_cast<int64_t>(i)) * 1000);
  EXPECT_TRUE(store->results(ResultQuery{"nobody", std::nullopt, 50})->empty());
}

TEST_F(SqliteStoreTest, EveryDoneRunsAfterItsOperationIsVisibleToOtherConnections) {
  auto store = open_store();
  // Read in done through a connection of our own: if done ran before commit, the row
  // would not be visible to it yet.
  SQLite::Database witness(path_, SQLite::OPEN_READONLY);
  SQLite::Statement count(witness, "SELECT COUNT(*) FROM check_results WHERE at_ms = ?");
  constexpr int kWrites = 5000;  // several transactions' worth
  std::atomic<int> done_calls{0};
  std::atomic<int> invisible{0};
  std::atomic<int> failed{0};
  for (int i = 0; i < kWrites; ++i) {
    const int64_t at = kT0 + i;
    ASSERT_TRUE(store->write(RecordResult{"api", result_at(at), up_state(kT0)}, [&, at](const Status& s) {
      // Done callbacks all run on the one writer thread, so `count` is not shared.
      if (!s.ok()) ++failed;
      count.reset();
      count.bind(1, at);
      count.executeStep();
      if (count.getColumn(0).getInt() != 1) ++invisible;
      ++done_calls;
    }));
  }
  store->flush();
  EXPECT_EQ(done_calls, kWrites);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(invisible, 0);
}

TEST_F(SqliteStoreTest, FlushWithNothingQueuedReturns) {
  auto store = open_store();
  store->flush();
  store->flush();
}

TEST_F(SqliteStoreTest, AFullQueueRefusesWritesUntilItDrains) {
  auto store = open_store();
  std::promise<void> in_done;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ASSERT_TRUE(store->write(SaveState{"hold", up_state(kT0)}, [&, released](const Status&) {
    in_done.set_value();
    released.wait();
  }));
  in_done.get_future().wait();  // the writer is busy and has taken its batch out of the queue

  std::atomic<size_t> done_calls{0};
  for (size_t i = 0; i < Store::kMaxQueuedWrites; ++i) {
    ASSERT_TRUE(store->write(SaveState{"m" + std::to_string(i % 100), up_state(kT0)}, [&](const Status& s) {
      done_calls += s.ok() ? 1 : 0;
    })) << i;
  }
  EXPECT_FALSE(store->write(SaveState{"one-too-many", up_state(kT0)}));

  release.set_value();
  store->flush();
  EXPECT_EQ(done_calls, Store::kMaxQueuedWrites);
  EXPECT_TRUE(store->write(SaveState{"after", up_state(kT0)}));
  store->flush();
  EXPECT_EQ(store->load_states()->size(), 102u);  // hold, m0..m99, after
}

TEST_F(SqliteStoreTest, ReadersRunConcurrentlyWithTheWriter) {
  auto store = open_store();
  constexpr int kWrites = 10'000;
  constexpr int kPage = 500;  // small enough that readers do not starve the writer on two cores
  std::atomic<bool> writing{true};
  std::atomic<int> read_errors{0};
  std::atomic<int> went_backwards{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      size_t last = 0;
      while (writing) {
        auto r = store->results(ResultQuery{"api", std::nullopt, kPage});
        auto s = store->load_states();
        auto i = store->incidents({});
        if (!r.ok() || !s.ok() || !i.ok()) {
          ++read_errors;
          continue;
        }
        // Committed history only grows (until it fills the page).
        if (r->size() < last) ++went_backwards;
        last = r->size();
        ++reads;
      }
    });
  }
  for (int i = 0; i < kWrites; ++i) {
    while (!store->write(RecordResult{"api", result_at(kT0 + i), up_state(kT0)})) std::this_thread::yield();
    if (i % 1000 == 0) {
      ASSERT_TRUE(store->write(OpenIncident{incident_of(i + 1, "api", kT0 + i)}));
    }
  }
  store->flush();
  writing = false;
  for (auto& t : readers) t.join();
  EXPECT_EQ(read_errors, 0);
  EXPECT_EQ(went_backwards, 0);
  EXPECT_GT(reads, 0);
  EXPECT_EQ(store->results(ResultQuery{"api", std::nullopt, SqliteStore::kMaxRowsPerRead})->size(),
            static_cast<size_t>(SqliteStore::kMaxRowsPerRead));
}

TEST_F(SqliteStoreTest, AMissingDirectoryIsAnErrorNotACrash) {
  auto store = SqliteStore::open((dir_ / "no" / "such" / "dir" / "trainwatch.db").string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, "store.open");
  EXPECT_NE(store.error().message.find("no/such/dir"), std::string::npos) << store.error().message;
}

TEST_F(SqliteStoreTest, AFileThatIsNotADatabaseIsAnError) {
  std::ofstream(path_) << std::string(8192, 'x');
  auto store = SqliteStore::open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, "store.open");
}

TEST_F(SqliteStoreTest, AnUnknownStatusInTheFileIsReportedAsCorrupt) {
  auto store = open_store();
  ASSERT_TRUE(write_and_wait(*store, SaveState{"api", up_state(kT0)}).ok());
  {
    SQLite::Database raw(path_, SQLite::OPEN_READWRITE, 5000);
    raw.exec("UPDATE monitor_state SET status = 'sideways'");
  }
  auto states = store->load_states();
  ASSERT_FALSE(states.ok());
  EXPECT_EQ(states.error().code, "store.corrupt");
}

}  // namespace
}  // namespace trainwatch
