// What only the SQLite store has to show for its ping chains: a crash before the heads are
// saved loses no ping. Everything else about pings is in conformance_heartbeat_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>

#include "reporter/temp_dir.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000;

Status write_and_wait(Store& store, WriteOp op) {
  std::promise<Status> done;
  auto future = done.get_future();
  EXPECT_TRUE(store.write(std::move(op), [&](const Status& s) { done.set_value(s); }));
  return future.get();
}

RecordPing ping(const std::string& monitor, PingKind kind, int64_t at_ms, std::string body = "") {
  PingRecord r;
  r.monitor = monitor;
  r.ping.kind = kind;
  r.ping.at = from_unix_ms(at_ms);
  r.ping.source = "10.0.0.7";
  r.ping.user_agent = "curl/7.88.1";
  r.ping.body = std::move(body);
  return RecordPing{r};
}

class HeartbeatStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = sqlite::SqliteStore::open(dir_.path() + "/trainwatch.db");
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(opened).value();
  }
  trainwatch::testing::TempDir dir_;
  std::unique_ptr<sqlite::SqliteStore> store_;
};

std::vector<int64_t> ping_times(Store& store, const std::string& monitor) {
  std::vector<int64_t> out;
  auto page = store.pings(PingQuery{monitor, std::nullopt, 100});
  EXPECT_TRUE(page.ok()) << page.error().message;
  if (page.ok()) {
    for (const PingRecord& r : *page) out.push_back(to_unix_ms(r.ping.at));
  }
  return out;
}

// Two monitors' pings interleaved, so each monitor's chain skips the other's rows.
void write_interleaved(Store& store, int64_t from_ms, int count) {
  for (int i = 0; i < count; ++i) {
    ASSERT_TRUE(
        write_and_wait(store, ping(i % 2 == 0 ? "ckpt" : "eval", PingKind::kSuccess, from_ms + i)).ok());
  }
}

TEST_F(HeartbeatStoreTest, ACrashBeforeTheNewestPingsAreSavedLosesNoneOfThem) {
  write_interleaved(*store_, kT0, 6);
  // The files as a crash leaves them: committed pings in the WAL, their heads never saved.
  namespace fs = std::filesystem;
  const fs::path image = fs::path(dir_.path()) / "crash";
  fs::create_directories(image);
  for (const char* file : {"trainwatch.db", "trainwatch.db-wal"}) {
    fs::copy_file(fs::path(dir_.path()) / file, image / file);
  }
  auto recovered = sqlite::SqliteStore::open((image / "trainwatch.db").string());
  ASSERT_TRUE(recovered.ok()) << recovered.error().message;
  EXPECT_EQ(ping_times(**recovered, "ckpt"), (std::vector<int64_t>{kT0 + 4, kT0 + 2, kT0}));
  write_interleaved(**recovered, kT0 + 100, 1);
  EXPECT_EQ(ping_times(**recovered, "ckpt"), (std::vector<int64_t>{kT0 + 100, kT0 + 4, kT0 + 2, kT0}));
  auto marks = (*recovered)->heartbeat_marks("eval");
  ASSERT_TRUE(marks.ok() && marks->last_ping);
  EXPECT_EQ(to_unix_ms(marks->last_ping->ping.at), kT0 + 5);
}

}  // namespace
}  // namespace trainwatch
