// Results, states and incidents, the same on every store (conformance.h).
#include "storage/conformance.h"

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreResults : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreResults, StoreFactories, FactoryName);

TYPED_TEST(StoreResults, RecordResultStoresTheResultAndTheState) {
  Store* store = &this->store();
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

TYPED_TEST(StoreResults, SaveStateReplacesTheStateAndKeepsNullsNull) {
  Store* store = &this->store();
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

TYPED_TEST(StoreResults, IncidentsOpenAndClose) {
  Store* store = &this->store();
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

TYPED_TEST(StoreResults, IncidentsPageNewestFirstAndFilterByMonitor) {
  Store* store = &this->store();
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

TYPED_TEST(StoreResults, ResultsPageNewestFirstPerMonitor) {
  Store* store = &this->store();
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

// depends_on: the monitor that explained an incident is kept with it, across a reopen;
// an incident of its own reads "".
TYPED_TEST(StoreResults, AnIncidentKeepsTheMonitorThatCausedIt) {
  Store* store = &this->store();
  Incident caused = incident_of(1, "node-1-health", kT0);
  caused.caused_by = "llama-job";
  MonitorState down;
  down.status = MonitorStatus::kDown;
  down.since = from_unix_ms(kT0);
  down.open_incident_id = 1;
  ASSERT_TRUE(
      write_and_wait(*store, RecordResult{"node-1-health", result_at(kT0, false), down, {}, caused}).ok());
  ASSERT_TRUE(write_and_wait(*store, OpenIncident{incident_of(2, "llama-job", kT0)}).ok());

  this->reopen();
  store = &this->store();
  auto one = store->incident(1);
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ((*one)->caused_by, "llama-job");
  auto listed = store->incidents(IncidentQuery{std::nullopt, std::nullopt, 50});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].caused_by, "");  // newest first: the job's own
  EXPECT_EQ((*listed)[1].caused_by, "llama-job");
}

}  // namespace
}  // namespace trainwatch::testing
