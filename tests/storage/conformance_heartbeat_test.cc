// The ping log, its paging, heartbeat marks and tokens, the same on every store (conformance.h).
#include "storage/conformance.h"

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreHeartbeat : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreHeartbeat, StoreFactories, FactoryName);

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

TYPED_TEST(StoreHeartbeat, PingsAreStoredWithEveryFieldAndPagedNewestFirst) {
  RecordPing first = ping("ckpt", PingKind::kExitCode, kT0, "Traceback\nboom");
  first.record.ping.exit_code = 3;
  first.record.ping.body_truncated = true;
  first.record.run_ms = 4200;
  ASSERT_TRUE(write_and_wait(*this->store_, first).ok());
  for (int i = 1; i <= 4; ++i)
    ASSERT_TRUE(write_and_wait(*this->store_, ping("ckpt", PingKind::kSuccess, kT0 + i)).ok());
  ASSERT_TRUE(write_and_wait(*this->store_, ping("other", PingKind::kSuccess, kT0)).ok());

  auto page = this->store_->pings(PingQuery{"ckpt", std::nullopt, 3});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 3u);
  EXPECT_EQ(to_unix_ms(page->front().ping.at), kT0 + 4);
  auto rest = this->store_->pings(PingQuery{"ckpt", page->back().id, 3});
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 2u);
  const PingRecord& r = rest->back();
  EXPECT_EQ(r.monitor, "ckpt");
  EXPECT_EQ(r.ping.kind, PingKind::kExitCode);
  EXPECT_EQ(r.ping.exit_code, 3);
  EXPECT_EQ(r.ping.source, "10.0.0.7");
  EXPECT_EQ(r.ping.user_agent, "curl/7.88.1");
  EXPECT_EQ(r.ping.body, "Traceback\nboom");
  EXPECT_TRUE(r.ping.body_truncated);
  EXPECT_EQ(r.run_ms, 4200);
}

TYPED_TEST(StoreHeartbeat, MarksAreTheLastFinishAndANewerStart) {
  auto empty = this->store_->heartbeat_marks("ckpt");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->last_ping);

  ASSERT_TRUE(write_and_wait(*this->store_, ping("ckpt", PingKind::kStart, kT0)).ok());
  ASSERT_TRUE(write_and_wait(*this->store_, ping("ckpt", PingKind::kSuccess, kT0 + 10)).ok());
  ASSERT_TRUE(write_and_wait(*this->store_, ping("ckpt", PingKind::kStart, kT0 + 20)).ok());
  ASSERT_TRUE(write_and_wait(*this->store_, ping("ckpt", PingKind::kLog, kT0 + 30)).ok());
  auto marks = this->store_->heartbeat_marks("ckpt");
  ASSERT_TRUE(marks.ok());
  ASSERT_TRUE(marks->last_ping && marks->last_finish && marks->open_start);
  EXPECT_EQ(marks->last_ping->ping.kind, PingKind::kLog);
  EXPECT_EQ(to_unix_ms(marks->last_finish->ping.at), kT0 + 10);
  EXPECT_EQ(to_unix_ms(*marks->open_start), kT0 + 20);

  ASSERT_TRUE(write_and_wait(*this->store_, ping("ckpt", PingKind::kFail, kT0 + 40)).ok());
  marks = this->store_->heartbeat_marks("ckpt");
  EXPECT_EQ(marks->last_finish->ping.kind, PingKind::kFail);
  EXPECT_FALSE(marks->open_start) << "the finish closed the run";
}

TYPED_TEST(StoreHeartbeat, EachMonitorsPingsAreFoundAfterARestart) {
  write_interleaved(*this->store_, kT0, 6);
  this->reopen();
  write_interleaved(*this->store_, kT0 + 100, 2);
  EXPECT_EQ(ping_times(*this->store_, "ckpt"), (std::vector<int64_t>{kT0 + 100, kT0 + 4, kT0 + 2, kT0}));
  EXPECT_EQ(ping_times(*this->store_, "eval"), (std::vector<int64_t>{kT0 + 101, kT0 + 5, kT0 + 3, kT0 + 1}));
}

TYPED_TEST(StoreHeartbeat, APageCursorThatIsNotThisMonitorsPingStillPagesByAge) {
  write_interleaved(*this->store_, kT0, 6);
  auto eval = this->store_->pings(PingQuery{"eval", std::nullopt, 1});
  ASSERT_TRUE(eval.ok() && eval->size() == 1u);
  // eval's newest ping is newer than ckpt's last two; ckpt's older ones follow.
  auto page = this->store_->pings(PingQuery{"ckpt", eval->front().id - 2, 10});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(to_unix_ms(page->front().ping.at), kT0 + 2);
}

TYPED_TEST(StoreHeartbeat, PruningDeletesTheOldestPingsOlderThanRetention) {
  write_interleaved(*this->store_, kT0, 6);
  ASSERT_TRUE(write_and_wait(*this->store_, PruneResults{from_unix_ms(kT0 + 3), 2})
                  .ok());  // bounded: 2 of the 3 old ones
  EXPECT_EQ(ping_times(*this->store_, "ckpt"), (std::vector<int64_t>{kT0 + 4, kT0 + 2}));
  ASSERT_TRUE(write_and_wait(*this->store_, PruneResults{from_unix_ms(kT0 + 3), 100}).ok());
  EXPECT_EQ(ping_times(*this->store_, "ckpt"), (std::vector<int64_t>{kT0 + 4}));
  EXPECT_EQ(ping_times(*this->store_, "eval"), (std::vector<int64_t>{kT0 + 5, kT0 + 3}));
  auto marks = this->store_->heartbeat_marks("ckpt");
  ASSERT_TRUE(marks.ok() && marks->last_finish);
  EXPECT_EQ(to_unix_ms(marks->last_finish->ping.at), kT0 + 4);
}

TYPED_TEST(StoreHeartbeat, TheFirstSavedTokenOfAMonitorStays) {
  ASSERT_TRUE(write_and_wait(*this->store_, SaveToken{"ckpt", "first-token"}).ok());
  ASSERT_TRUE(write_and_wait(*this->store_, SaveToken{"ckpt", "second-token"}).ok());
  auto tokens = this->store_->heartbeat_tokens();
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ(tokens->at("ckpt"), "first-token");
}

}  // namespace
}  // namespace trainwatch::testing
