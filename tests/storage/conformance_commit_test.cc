// Batches, group commit, write health and restarts, the same on every store (conformance.h).
#include <atomic>
#include <thread>

#include "storage/conformance.h"
#include "storage/store_errors.h"

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreCommit : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreCommit, StoreFactories, FactoryName);

TYPED_TEST(StoreCommit, AFailedOperationFailsAloneAndTheRestOfItsBatchCommits) {
  Store* store = &this->store();
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
  EXPECT_EQ(statuses[1].error().code, store_error::kWrite);
  ASSERT_FALSE(statuses[2].ok());
  EXPECT_EQ(statuses[2].error().code, store_error::kNotFound) << statuses[2].error().message;
  EXPECT_TRUE(statuses[3].ok());
  // A caller's mistake is counted, but the store is not refusing writes.
  const WriteHealth health = store->write_health();
  EXPECT_EQ(health.failures_by_reason.at("constraint"), 1u);
  EXPECT_FALSE(health.refusing);

  auto incident = store->incident(5);
  ASSERT_TRUE(incident.ok() && incident->has_value());
  EXPECT_EQ((*incident)->monitor, "api");
  EXPECT_EQ(store->results(ResultQuery{"api", std::nullopt, 50})->size(), 1u);
}

TYPED_TEST(StoreCommit, EverythingQueuedSurvivesCloseAndReopen) {
  {
    Store* store = &this->store();
    ASSERT_TRUE(store->write(RecordResult{"api", result_at(kT0), up_state(kT0)}));
    ASSERT_TRUE(store->write(OpenIncident{incident_of(3, "api", kT0)}));
    ASSERT_TRUE(store->write(CloseIncident{3, from_unix_ms(kT0 + 1)}));
    // No flush: closing must drain and commit.
  }
  this->reopen();
  Store* store = &this->store();
  ASSERT_EQ(store->load_states()->size(), 1u);
  EXPECT_EQ(store->results(ResultQuery{"api", std::nullopt, 50})->size(), 1u);
  auto incident = store->incident(3);
  ASSERT_TRUE(incident.ok() && incident->has_value());
  EXPECT_TRUE((*incident)->ended.has_value());
  EXPECT_EQ(*store->next_incident_id(), 4);
}

TYPED_TEST(StoreCommit, FlushWithNothingQueuedReturns) {
  Store* store = &this->store();
  store->flush();
  store->flush();
}

TYPED_TEST(StoreCommit, ReadersRunConcurrentlyWithTheWriter) {
  Store* store = &this->store();
  constexpr int kWrites = 3'000;  // several batches; a round trip each op on PostgreSQL
  constexpr int kPage = 500;      // small enough that readers do not starve the writer on two cores
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
  EXPECT_EQ(store->results(ResultQuery{"api", std::nullopt, kWrites + 1})->size(),
            static_cast<size_t>(kWrites));
}

// Group commit: many writes in flight at once, and each done comes only once its write
// is visible to a reader on another connection (so after COMMIT, not before).
TYPED_TEST(StoreCommit, EveryDoneRunsAfterItsOperationIsVisibleToReaders) {
  Store* store = &this->store();
  constexpr int kWrites = 2'000;  // several transactions' worth
  std::atomic<int> done_calls{0};
  std::atomic<int> invisible{0};
  std::atomic<int> failed{0};
  for (int i = 0; i < kWrites; ++i) {
    const int64_t at = kT0 + i;
    ASSERT_TRUE(store->write(RecordResult{"api", result_at(at), up_state(kT0)}, [&, at](const Status& s) {
      if (!s.ok()) ++failed;
      auto newest = store->results(ResultQuery{"api", at + 1, 1});
      if (!newest.ok() || newest->empty() || to_unix_ms(newest->front().at) != at) ++invisible;
      ++done_calls;
    }));
  }
  store->flush();
  EXPECT_EQ(done_calls, kWrites);
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(invisible, 0);
  EXPECT_FALSE(store->write_health().refusing);
  EXPECT_TRUE(store->write_health().failures_by_reason.empty());
}

}  // namespace
}  // namespace trainwatch::testing
