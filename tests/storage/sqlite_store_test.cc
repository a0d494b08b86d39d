#include "storage/sqlite/sqlite_store.h"
#include "storage/store_errors.h"

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

  std::unique_ptr<sqlite::SqliteStore> open_store() {
    auto store = sqlite::SqliteStore::open(path_);
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    return store.ok() ? std::move(store).value() : nullptr;
  }

  fs::path dir_;
  std::string path_;
};

MonitorState up_state(int64_t since_ms) {
  MonitorState s;
  s.status = MonitorStatus::kUp;
  s.since = from_unix_ms(since_ms);
  s.last_check = from_unix_ms(since_ms + 1000);
  s.last_latency_ms = 12.5;
  s.consecutive_failures = 0;
  return s;
}

// Queues `op` and waits for its done; returns the status it reported.
Status write_and_wait(Store& store, WriteOp op) {
  std::promise<Status> done;
  auto future = done.get_future();
  EXPECT_TRUE(store.write(std::move(op), [&](const Status& s) { done.set_value(s); }));
  return future.get();
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

RecordPing success_ping(int64_t at_ms) {
  PingRecord r;
  r.monitor = "nightly";
  r.ping.kind = PingKind::kSuccess;
  r.ping.at = from_unix_ms(at_ms);
  return RecordPing{r};
}

size_t stored_pings(Store& store) {
  auto pings = store.pings(PingQuery{"nightly", std::nullopt, 10'000});
  EXPECT_TRUE(pings.ok()) << pings.error().message;
  return pings.ok() ? pings->size() : 0;
}

TEST_F(SqliteStoreTest, AWalDeletedUnderTheStoreRefusesWritesAndKeepsWhatItAcknowledged) {
  auto store = open_store();
  // Fewer pages than a checkpoint needs: every one of these is only in the WAL.
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(write_and_wait(*store, success_ping(kT0 + i)).ok()) << i;

  fs::remove(path_ + "-wal");  // a cleanup script
  for (int i = 0; i < 3; ++i) {
    const Status refused = write_and_wait(*store, success_ping(kT0 + 1000 + i));
    ASSERT_FALSE(refused.ok()) << "a ping acknowledged after its WAL was deleted";
    EXPECT_EQ(refused.error().code, store_error::kUnavailable);
    EXPECT_NE(refused.error().message.find("trainwatch.db-wal' was deleted"), std::string::npos)
        << refused.error().message;
  }
  const WriteHealth health = store->write_health();
  EXPECT_TRUE(health.refusing);
  EXPECT_NE(health.reason.find("until trainwatch is restarted"), std::string::npos) << health.reason;
  EXPECT_EQ(health.failures_by_reason.at("file_vanished"), 3u);
  EXPECT_EQ(health.failed_pings, 3u);

  store.reset();  // the restart
  store = open_store();
  EXPECT_EQ(stored_pings(*store), 200u) << "acknowledged pings lost with the deleted WAL";
  EXPECT_TRUE(write_and_wait(*store, success_ping(kT0 + 2000)).ok()) << "the reopened store takes writes";
  EXPECT_FALSE(store->write_health().refusing);
}

TEST_F(SqliteStoreTest, AnIdleStoreNoticesItsDeletedWalWithinTheCheckInterval) {
  auto store = open_store();
  ASSERT_TRUE(write_and_wait(*store, success_ping(kT0)).ok());
  fs::remove(path_ + "-wal");
  // No write: the writer's idle tick finds it.
  const auto deadline = std::chrono::steady_clock::now() + 5 * sqlite::SqliteStore::kFileCheckInterval;
  while (!store->write_health().refusing && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const WriteHealth health = store->write_health();
  ASSERT_TRUE(health.refusing);
  EXPECT_NE(health.reason.find("trainwatch.db-wal' was deleted"), std::string::npos) << health.reason;
  store.reset();
  store = open_store();
  EXPECT_EQ(stored_pings(*store), 1u);
}

TEST_F(SqliteStoreTest, ADatabaseFileDeletedUnderTheStoreRefusesWrites) {
  auto store = open_store();
  ASSERT_TRUE(write_and_wait(*store, success_ping(kT0)).ok());
  fs::remove(path_);
  const Status refused = write_and_wait(*store, success_ping(kT0 + 1));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("trainwatch.db' was deleted"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(store->write_health().refusing);
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

TEST_F(SqliteStoreTest, AMissingDirectoryIsAnErrorNotACrash) {
  auto store = sqlite::SqliteStore::open((dir_ / "no" / "such" / "dir" / "trainwatch.db").string());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, store_error::kOpen);
  EXPECT_NE(store.error().message.find("no/such/dir"), std::string::npos) << store.error().message;
}

TEST_F(SqliteStoreTest, AFileThatIsNotADatabaseIsAnError) {
  std::ofstream(path_) << std::string(8192, 'x');
  auto store = sqlite::SqliteStore::open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, store_error::kOpen);
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
  EXPECT_EQ(states.error().code, store_error::kCorrupt);
}

}  // namespace
}  // namespace trainwatch
