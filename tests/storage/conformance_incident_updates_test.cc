// Updates posted about incidents, the same on every store (conformance.h).
#include <future>
#include <vector>

#include "storage/conformance.h"
#include "storage/store_errors.h"

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreIncidentUpdates : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreIncidentUpdates, StoreFactories, FactoryName);

AddIncidentUpdate update_of(int64_t incident_id, int64_t at_ms, IncidentUpdateStatus status,
                            std::string text) {
  IncidentUpdate u;
  u.incident_id = incident_id;
  u.at = from_unix_ms(at_ms);
  u.status = status;
  u.text = std::move(text);
  return AddIncidentUpdate{std::move(u)};
}

TYPED_TEST(StoreIncidentUpdates, UpdatesComeBackPerIncidentOldestFirstAndSurviveARestart) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, OpenIncident{incident_of(1, "api", kT0)}).ok());
  ASSERT_TRUE(write_and_wait(store, OpenIncident{incident_of(2, "db", kT0 + 5)}).ok());
  ASSERT_TRUE(write_and_wait(store, CloseIncident{2, from_unix_ms(kT0 + 60'000)}).ok());
  ASSERT_TRUE(
      write_and_wait(store, update_of(1, kT0 + 10, IncidentUpdateStatus::kInvestigating, "Loader hangs"))
          .ok());
  ASSERT_TRUE(write_and_wait(store, update_of(2, kT0 + 20, IncidentUpdateStatus::kResolved, "Fixed")).ok())
      << "a closed incident takes updates too";
  ASSERT_TRUE(write_and_wait(store, update_of(1, kT0 + 30, IncidentUpdateStatus::kIdentified,
                                              "Node 3's disk <full> & \"stuck\""))
                  .ok());

  this->reopen();
  auto updates = this->store().incident_updates({1, 2, 3});
  ASSERT_TRUE(updates.ok()) << updates.error().message;
  ASSERT_EQ(updates->size(), 2u) << "an incident without updates is absent";
  const auto& first = updates->at(1);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_LT(first[0].id, first[1].id);
  EXPECT_EQ(first[0].incident_id, 1);
  EXPECT_EQ(to_unix_ms(first[0].at), kT0 + 10);
  EXPECT_EQ(first[0].status, IncidentUpdateStatus::kInvestigating);
  EXPECT_EQ(first[0].text, "Loader hangs");
  EXPECT_EQ(first[1].status, IncidentUpdateStatus::kIdentified);
  EXPECT_EQ(first[1].text, "Node 3's disk <full> & \"stuck\"");
  ASSERT_EQ(updates->at(2).size(), 1u);
  EXPECT_EQ(updates->at(2)[0].status, IncidentUpdateStatus::kResolved);

  auto none = this->store().incident_updates({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TYPED_TEST(StoreIncidentUpdates, AnUpdateOfAnUnknownIncidentIsNotFoundAndStoresNothing) {
  Store& store = this->store();
  Status missing = write_and_wait(store, update_of(42, kT0, IncidentUpdateStatus::kMonitoring, "watching"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, store_error::kNotFound);
  EXPECT_FALSE(store.write_health().refusing) << "a missing incident is the caller's, not the store's";
  auto updates = store.incident_updates({42});
  ASSERT_TRUE(updates.ok());
  EXPECT_TRUE(updates->empty());
}

TYPED_TEST(StoreIncidentUpdates, AnIncidentTakesAtMostTheBoundOfUpdates) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, OpenIncident{incident_of(1, "api", kT0)}).ok());
  // Queued all at once, as a burst of posts would be: the bound holds inside the batch.
  std::vector<std::future<Status>> done;
  for (int i = 0; i <= kMaxUpdatesPerIncident; ++i) {
    auto promise = std::make_shared<std::promise<Status>>();
    done.push_back(promise->get_future());
    ASSERT_TRUE(store.write(update_of(1, kT0 + i, IncidentUpdateStatus::kMonitoring, "still fine"),
                            [promise](const Status& s) { promise->set_value(s); }));
  }
  for (int i = 0; i < kMaxUpdatesPerIncident; ++i) EXPECT_TRUE(done[static_cast<size_t>(i)].get().ok()) << i;
  Status over = done.back().get();
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, store_error::kFull);
  EXPECT_FALSE(store.write_health().refusing);
  auto updates = store.incident_updates({1});
  ASSERT_TRUE(updates.ok());
  EXPECT_EQ(updates->at(1).size(), static_cast<size_t>(kMaxUpdatesPerIncident));
}

}  // namespace
}  // namespace trainwatch::testing
