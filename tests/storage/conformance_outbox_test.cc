// The alert outbox and the API catalog (monitors, maintenance windows), the same on every
// store (conformance.h).
#include <algorithm>

#include "storage/conformance.h"
#include "storage/store_errors.h"

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreOutbox : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreOutbox, StoreFactories, FactoryName);

NewDelivery delivery(const std::string& channel, const std::string& monitor, int64_t created_ms) {
  return NewDelivery{channel,
                     monitor,
                     1,
                     "down",
                     R"({"event":"down"})",
                     from_unix_ms(created_ms),
                     from_unix_ms(created_ms + 500)};
}

// A DOWN with its incident and one notification per channel, as the engine writes it.
RecordResult down_with_alerts(int64_t incident_id, std::vector<NewDelivery> outbox) {
  MonitorState down;
  down.status = MonitorStatus::kDown;
  down.since = from_unix_ms(kT0);
  down.open_incident_id = incident_id;
  return RecordResult{"api", result_at(kT0, false), down, std::move(outbox),
                      incident_of(incident_id, "api", kT0)};
}

TYPED_TEST(StoreOutbox, AlertsCommitWithTheirIncidentAndComePendingOldestFirst) {
  Store& store = this->store();
  ASSERT_TRUE(
      write_and_wait(store, down_with_alerts(1, {delivery("hook", "api", kT0), delivery("mail", "api", kT0)}))
          .ok());
  ASSERT_TRUE(
      write_and_wait(
          store,
          RecordResult{"db", result_at(kT0 + 1, false), up_state(kT0), {delivery("hook", "db", kT0 + 1)}})
          .ok());

  auto pending = store.deliveries(
      DeliveryQuery{std::nullopt, std::nullopt, DeliveryStatus::kPending, 0, std::nullopt, 50});
  ASSERT_TRUE(pending.ok()) << pending.error().message;
  ASSERT_EQ(pending->size(), 3u);
  EXPECT_LT((*pending)[0].id, (*pending)[1].id);
  EXPECT_LT((*pending)[1].id, (*pending)[2].id);
  const Delivery& first = pending->front();
  EXPECT_EQ(first.spec.channel, "hook");
  EXPECT_EQ(first.spec.monitor, "api");
  EXPECT_EQ(first.spec.incident_id, 1);
  EXPECT_EQ(first.spec.kind, "down");
  EXPECT_EQ(first.spec.event, R"({"event":"down"})");
  EXPECT_EQ(to_unix_ms(first.spec.created), kT0);
  EXPECT_EQ(to_unix_ms(first.spec.due), kT0 + 500);
  EXPECT_EQ(first.attempts, 0);
  EXPECT_FALSE(first.first_attempt || first.last_attempt || first.next_attempt || first.finished);
  auto incident = store.incident(1);
  ASSERT_TRUE(incident.ok() && incident->has_value());

  // The dispatcher's cursor: after an id, oldest first, by channel.
  auto hook = store.deliveries(
      DeliveryQuery{"hook", std::nullopt, DeliveryStatus::kPending, first.id, std::nullopt, 50});
  ASSERT_TRUE(hook.ok());
  ASSERT_EQ(hook->size(), 1u);
  EXPECT_EQ(hook->front().spec.monitor, "db");
  // API paging: newest first, before an id, by monitor.
  auto api =
      store.deliveries(DeliveryQuery{std::nullopt, "api", std::nullopt, std::nullopt, std::nullopt, 1});
  ASSERT_EQ(api->size(), 1u);
  EXPECT_EQ(api->front().spec.channel, "mail");
  auto older =
      store.deliveries(DeliveryQuery{std::nullopt, "api", std::nullopt, std::nullopt, api->front().id, 50});
  ASSERT_EQ(older->size(), 1u);
  EXPECT_EQ(older->front().spec.channel, "hook");
}

// A replica that takes a monitor back writes the reminder the one in between already
// sent: the store keeps one per incident, channel and due time (the reminder's number),
// so it is never sent twice under two delivery ids; its result commits all the same.
TYPED_TEST(StoreOutbox, AReminderIsStoredOncePerIncidentChannelAndDueTime) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, down_with_alerts(1, {delivery("hook", "api", kT0)})).ok());
  auto reminder = [](const std::string& channel, int64_t due_ms) {
    NewDelivery d = delivery(channel, "api", due_ms);
    d.kind = "reminder";
    d.due = from_unix_ms(due_ms);
    return d;
  };
  MonitorState down;
  down.status = MonitorStatus::kDown;
  down.since = from_unix_ms(kT0);
  down.open_incident_id = 1;
  auto still_down = [&](int64_t at, std::vector<NewDelivery> outbox) {
    return RecordResult{"api", result_at(at, false), down, std::move(outbox)};
  };
  const int64_t first_due = kT0 + 60'000;
  ASSERT_TRUE(write_and_wait(store, still_down(first_due + 5, {reminder("hook", first_due)})).ok());
  ASSERT_TRUE(write_and_wait(store, still_down(first_due + 900,
                                               {reminder("hook", first_due), reminder("mail", first_due)}))
                  .ok())
      << "the same reminder again commits, without it";
  ASSERT_TRUE(
      write_and_wait(store, still_down(first_due + 60'000, {reminder("hook", first_due + 60'000)})).ok());

  auto rows = store.deliveries(
      DeliveryQuery{std::nullopt, std::nullopt, DeliveryStatus::kPending, 0, std::nullopt, 50});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  std::vector<std::pair<std::string, int64_t>> reminders;
  for (const Delivery& d : *rows) {
    if (d.spec.kind == "reminder") reminders.emplace_back(d.spec.channel, to_unix_ms(d.spec.due));
  }
  std::sort(reminders.begin(), reminders.end());
  EXPECT_EQ(reminders, (std::vector<std::pair<std::string, int64_t>>{
                           {"hook", first_due}, {"hook", first_due + 60'000}, {"mail", first_due}}));
}

// Two replicas each saw the database go for 30 s and each tells it: the installation
// stores the alert once per channel; a later outage is told again.
TYPED_TEST(StoreOutbox, AStoreOutageIsToldOncePerChannelWhoeverSawIt) {
  Store& store = this->store();
  auto told = [](int64_t at_ms, const std::string& channel) {
    return NewDelivery{channel,      std::string(kStoreAlertName), std::nullopt,       "warning",
                       R"({"x":1})", from_unix_ms(at_ms),          from_unix_ms(at_ms)};
  };
  auto outage = [&](int64_t from_ms, int64_t to_ms, std::vector<std::string> channels) {
    RecordStoreOutage op{from_unix_ms(from_ms), from_unix_ms(to_ms), {}};
    for (const auto& c : channels) op.outbox.push_back(told(to_ms, c));
    return op;
  };
  ASSERT_TRUE(write_and_wait(store, outage(kT0, kT0 + 30'000, {"hook", "mail"})).ok());
  ASSERT_TRUE(write_and_wait(store, outage(kT0 + 1'000, kT0 + 31'500, {"hook", "mail"})).ok())
      << "the other replica's view of it commits, telling nothing";
  ASSERT_TRUE(write_and_wait(store, outage(kT0 + 600'000, kT0 + 620'000, {"hook"})).ok());

  auto rows = store.deliveries(DeliveryQuery{std::nullopt, std::string(kStoreAlertName),
                                             DeliveryStatus::kPending, 0, std::nullopt, 50});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  std::vector<std::pair<std::string, int64_t>> said;
  for (const Delivery& d : *rows) said.emplace_back(d.spec.channel, to_unix_ms(d.spec.created));
  std::sort(said.begin(), said.end());
  EXPECT_EQ(said, (std::vector<std::pair<std::string, int64_t>>{
                      {"hook", kT0 + 30'000}, {"hook", kT0 + 620'000}, {"mail", kT0 + 30'000}}));
}

TYPED_TEST(StoreOutbox, UpdatesMoveADeliveryOutOfPending) {
  Store& store = this->store();
  ASSERT_TRUE(
      write_and_wait(store, down_with_alerts(1, {delivery("hook", "api", kT0), delivery("mail", "api", kT0)}))
          .ok());
  auto rows = store.deliveries(DeliveryQuery{std::nullopt, std::nullopt, std::nullopt, 0, std::nullopt, 50});
  ASSERT_TRUE(rows.ok() && rows->size() == 2u);
  const int64_t hook = (*rows)[0].id;
  const int64_t mail = (*rows)[1].id;

  UpdateDelivery retry{hook,
                       DeliveryStatus::kPending,
                       1,
                       from_unix_ms(kT0 + 1),
                       from_unix_ms(kT0 + 1),
                       from_unix_ms(kT0 + 30'000),
                       "HTTP 502",
                       502,
                       std::nullopt};
  ASSERT_TRUE(write_and_wait(store, retry).ok());
  UpdateDelivery sent{
      mail, DeliveryStatus::kDelivered, 1, from_unix_ms(kT0 + 2), from_unix_ms(kT0 + 2), std::nullopt, "",
      250,  from_unix_ms(kT0 + 2)};
  ASSERT_TRUE(write_and_wait(store, sent).ok());

  auto pending = store.deliveries(
      DeliveryQuery{std::nullopt, std::nullopt, DeliveryStatus::kPending, 0, std::nullopt, 50});
  ASSERT_EQ(pending->size(), 1u);
  const Delivery& d = pending->front();
  EXPECT_EQ(d.id, hook);
  EXPECT_EQ(d.attempts, 1);
  EXPECT_EQ(to_unix_ms(*d.next_attempt), kT0 + 30'000);
  EXPECT_EQ(d.last_error, "HTTP 502");
  EXPECT_EQ(d.http_status, 502);
  EXPECT_FALSE(d.finished);
  auto delivered = store.deliveries(
      DeliveryQuery{std::nullopt, std::nullopt, DeliveryStatus::kDelivered, std::nullopt, std::nullopt, 50});
  ASSERT_EQ(delivered->size(), 1u);
  EXPECT_EQ(to_unix_ms(*delivered->front().finished), kT0 + 2);
  EXPECT_FALSE(delivered->front().next_attempt);

  UpdateDelivery nobody;
  nobody.id = 9999;
  nobody.status = DeliveryStatus::kFailed;
  Status missing = write_and_wait(store, nobody);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, store_error::kNotFound);
  EXPECT_FALSE(store.write_health().refusing) << "a missing row is the caller's, not the store's";
}

TYPED_TEST(StoreOutbox, ApiMonitorsAreSavedReplacedAndDeleted) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, SaveApiMonitor{"web", R"({"type":"http"})"}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveApiMonitor{"db", R"({"type":"tcp"})"}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveApiMonitor{"web", R"({"type":"http","interval":"5s"})"}).ok());
  auto monitors = store.api_monitors();
  ASSERT_TRUE(monitors.ok());
  ASSERT_EQ(monitors->size(), 2u);
  EXPECT_EQ((*monitors)[0].name, "db");
  EXPECT_EQ((*monitors)[1].spec_json, R"({"type":"http","interval":"5s"})");
  ASSERT_TRUE(write_and_wait(store, DeleteApiMonitor{"db"}).ok());
  this->reopen();
  monitors = this->store().api_monitors();
  ASSERT_EQ(monitors->size(), 1u);
  EXPECT_EQ(monitors->front().name, "web");
}

TYPED_TEST(StoreOutbox, ApiChannelsAreSavedReplacedAndDeleted) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, SaveApiChannel{"hook", R"({"type":"webhook"})"}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveApiChannel{"alpha", R"({"type":"ntfy"})"}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveApiChannel{"hook", R"({"type":"webhook","timeout":"5s"})"}).ok());
  auto channels = store.api_channels();
  ASSERT_TRUE(channels.ok());
  ASSERT_EQ(channels->size(), 2u);
  EXPECT_EQ((*channels)[0].name, "alpha");
  EXPECT_EQ((*channels)[1].spec_json, R"({"type":"webhook","timeout":"5s"})");
  ASSERT_TRUE(write_and_wait(store, DeleteApiChannel{"alpha"}).ok());
  this->reopen();
  channels = this->store().api_channels();
  ASSERT_EQ(channels->size(), 1u);
  EXPECT_EQ(channels->front().name, "hook");
}

TYPED_TEST(StoreOutbox, ApiWindowIdsAreNeverHandedOutTwice) {
  Store& store = this->store();
  EXPECT_EQ(*store.next_api_window_id(), 1);
  ASSERT_TRUE(write_and_wait(store, SaveApiWindow{1, R"({"name":"a"})", from_unix_ms(kT0)}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveApiWindow{2, R"({"name":"b"})", from_unix_ms(kT0 + 1)}).ok());
  ASSERT_TRUE(write_and_wait(store, DeleteApiWindow{2}).ok());
  EXPECT_EQ(*store.next_api_window_id(), 3) << "the deleted window's id stays used";
  auto windows = store.api_windows();
  ASSERT_TRUE(windows.ok());
  ASSERT_EQ(windows->size(), 1u);
  EXPECT_EQ(windows->front().id, 1);
  EXPECT_EQ(windows->front().spec_json, R"({"name":"a"})");
  EXPECT_EQ(to_unix_ms(windows->front().created), kT0);
  this->reopen();
  EXPECT_EQ(*this->store().next_api_window_id(), 3);
}

}  // namespace
}  // namespace trainwatch::testing
