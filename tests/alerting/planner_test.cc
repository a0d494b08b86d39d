// The planner decides what goes into the outbox for each applied result; driven here
// with a manual clock, as the engine would call it.
#include "alerting/planner.h"

#include "alerting/event.h"

#include <gtest/gtest.h>

#include "config/loader.h"
#include "fakes/manual_clock.h"

namespace trainwatch::alerting {
namespace {

using std::chrono::minutes;

class PlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadedConfig loaded = load_config_text(
        "monitors:\n"
        "  - {name: a, type: tcp, host: h, port: 1, notify: [x, y], notify_after: 5m, remind_every: 30m}\n"
        "  - {name: quiet, type: tcp, host: h, port: 1}\n"
        "notifications:\n"
        "  - {name: x, type: ntfy, topic: t}\n"
        "  - {name: y, type: ntfy, topic: t}\n",
        "c.yaml");
    ASSERT_TRUE(loaded.config);
    config_ = *loaded.config;
    planner_.configure(config_, {"x", "y"});
  }

  std::vector<NewDelivery> apply(const MonitorConfig& m, MonitorStatus before, MonitorStatus after,
                                 const std::optional<Incident>& opened, std::optional<Incident> closed,
                                 const std::optional<Incident>& open) {
    MonitorState b, a;
    b.status = before;
    a.status = after;
    CheckResult r;
    r.at = clock_.system_time();
    r.ok = after == MonitorStatus::kUp;
    r.cause = r.ok ? "" : "connect: connection refused";
    return planner_.on_apply(engine::AppliedResult{m, b, a, engine::Transition::kChanged, r, opened,
                                                   std::move(closed), open, false});
  }

  testing::ManualClock clock_;
  int wakes_ = 0;
  AlertPlanner planner_{clock_, [this] { ++wakes_; }};
  Config config_;
};

TEST_F(PlannerTest, DownIsDueAfterNotifyAfterOnEveryChannel) {
  Incident incident{3, "a", clock_.system_time(), std::nullopt, "connect: connection refused", ""};
  auto rows =
      apply(config_.monitors[0], MonitorStatus::kUp, MonitorStatus::kDown, incident, std::nullopt, incident);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].channel, "x");
  EXPECT_EQ(rows[1].channel, "y");
  EXPECT_EQ(rows[0].kind, "down");
  EXPECT_EQ(rows[0].incident_id, 3);
  EXPECT_EQ(rows[0].due, clock_.system_time() + minutes(5));
  auto event = event_from_json(rows[0].event);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->cause, "connect: connection refused");
  EXPECT_EQ(event->target, "h:1");
}

TEST_F(PlannerTest, RecoveryIsDueNowAndRemindersComeEveryPeriodAfterTheAlert) {
  Incident incident{3, "a", clock_.system_time(), std::nullopt, "refused", ""};
  apply(config_.monitors[0], MonitorStatus::kUp, MonitorStatus::kDown, incident, std::nullopt, incident);
  const std::optional<Incident> none;
  clock_.advance(minutes(34));  // 5m hold + 30m period not reached yet
  EXPECT_TRUE(
      apply(config_.monitors[0], MonitorStatus::kDown, MonitorStatus::kDown, none, std::nullopt, incident)
          .empty());
  clock_.advance(minutes(1));
  auto reminders =
      apply(config_.monitors[0], MonitorStatus::kDown, MonitorStatus::kDown, none, std::nullopt, incident);
  ASSERT_EQ(reminders.size(), 2u);
  EXPECT_EQ(reminders[0].kind, "reminder");
  clock_.advance(minutes(29));
  EXPECT_TRUE(
      apply(config_.monitors[0], MonitorStatus::kDown, MonitorStatus::kDown, none, std::nullopt, incident)
          .empty());

  Incident ended = incident;
  ended.ended = clock_.system_time();
  auto up = apply(config_.monitors[0], MonitorStatus::kDown, MonitorStatus::kUp, none, ended, none);
  ASSERT_EQ(up.size(), 2u);
  EXPECT_EQ(up[0].kind, "up");
  EXPECT_EQ(up[0].due, clock_.system_time());
}

// server.public_url: the page of the monitor, a job's page for a job.
TEST_F(PlannerTest, AlertsLinkToTheirPageUnderThePublicUrl) {
  LoadedConfig loaded = load_config_text(
      "server: {public_url: 'https://tw.example.org/'}\n"
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1, notify: [x]}\n"
      "  - {name: llama, type: job, notify: [x]}\n"
      "notifications:\n"
      "  - {name: x, type: ntfy, topic: t}\n",
      "c.yaml");
  ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0].to_string());
  planner_.configure(*loaded.config, {"x"});
  planner_.set_public_url(loaded.config->server.public_url);
  Incident incident{5, "a", clock_.system_time(), std::nullopt, "refused", ""};
  auto rows = apply(loaded.config->monitors[0], MonitorStatus::kUp, MonitorStatus::kDown, incident,
                    std::nullopt, incident);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(event_from_json(rows[0].event)->url, "https://tw.example.org/monitors/a");

  Incident job_incident{6, "llama", clock_.system_time(), std::nullopt, "rank 5 is gone", ""};
  rows = apply(loaded.config->monitors[1], MonitorStatus::kUp, MonitorStatus::kDown, job_incident,
               std::nullopt, job_incident);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(event_from_json(rows[0].event)->url, "https://tw.example.org/jobs/llama");
}

// A job's alert names the job and, failing, its culprit as labels; its recovery names the
// job only (the dispatcher gives it the labels the alert fired with).
TEST_F(PlannerTest, AJobsAlertNamesItsCulpritAsLabels) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: llama, type: job, notify: [x]}\n"
      "notifications:\n"
      "  - {name: x, type: ntfy, topic: t}\n",
      "c.yaml");
  ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0].to_string());
  planner_.configure(*loaded.config, {"x"});
  MonitorState up, down;
  up.status = MonitorStatus::kUp;
  down.status = MonitorStatus::kDown;
  CheckResult r;
  r.at = clock_.system_time();
  r.cause = "rank 5 (node-b, pid 41231) was killed by SIGKILL at step 812";
  r.labels = {{"reason", "rank_gone"}, {"rank", "5"}, {"node", "node-b"}};
  Incident incident{6, "llama", clock_.system_time(), std::nullopt, r.cause, ""};
  const MonitorConfig& job = loaded.config->monitors[0];
  auto rows = planner_.on_apply(engine::AppliedResult{job, up, down, engine::Transition::kChanged, r,
                                                      incident, std::nullopt, incident, false});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(event_from_json(rows[0].event)->labels,
            (std::vector<std::pair<std::string, std::string>>{
                {"training_job", "llama"}, {"reason", "rank_gone"}, {"rank", "5"}, {"node", "node-b"}}));

  CheckResult ok;
  ok.at = clock_.system_time();
  ok.ok = true;
  Incident closed = incident;
  closed.ended = clock_.system_time();
  rows = planner_.on_apply(engine::AppliedResult{job, down, up, engine::Transition::kChanged, ok,
                                                 std::nullopt, closed, std::nullopt, false});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(event_from_json(rows[0].event)->labels,
            (std::vector<std::pair<std::string, std::string>>{{"training_job", "llama"}}));
}

// Without public_url, alerts carry no link.
TEST_F(PlannerTest, WithoutAPublicUrlAlertsCarryNoLink) {
  Incident incident{5, "a", clock_.system_time(), std::nullopt, "refused", ""};
  auto rows =
      apply(config_.monitors[0], MonitorStatus::kUp, MonitorStatus::kDown, incident, std::nullopt, incident);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) EXPECT_EQ(event_from_json(row.event)->url, "");
}

// A reminder is due at its place in the incident's schedule (notify_after, then every
// remind_every), not when the result that sends it came: every replica gives the k-th
// reminder of an incident the same due time, which the store keeps once (store.h).
TEST_F(PlannerTest, AReminderIsDueAtItsPlaceInTheIncidentsSchedule) {
  const SystemTime started = clock_.system_time();
  Incident incident{3, "a", started, std::nullopt, "refused", ""};
  apply(config_.monitors[0], MonitorStatus::kUp, MonitorStatus::kDown, incident, std::nullopt, incident);
  const std::optional<Incident> none;
  clock_.advance(minutes(35) + std::chrono::seconds(40));
  auto first =
      apply(config_.monitors[0], MonitorStatus::kDown, MonitorStatus::kDown, none, std::nullopt, incident);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].due, started + minutes(35));
  clock_.advance(minutes(30));
  auto second =
      apply(config_.monitors[0], MonitorStatus::kDown, MonitorStatus::kDown, none, std::nullopt, incident);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0].due, started + minutes(65));
}

// The store could not take pings for 30 s: one warning on each channel that does not
// page, under the store's own name, saying what it cost.
TEST_F(PlannerTest, AStoreOutageIsAWarningOnEveryChannelThatDoesNotPage) {
  const SystemTime from = clock_.system_time();
  auto rows = planner_.on_store_outage(from, from + std::chrono::seconds(30), "the database is unreachable");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].channel, "x");
  EXPECT_EQ(rows[0].monitor, std::string(kStoreAlertName));
  EXPECT_EQ(rows[0].kind, "warning");
  EXPECT_FALSE(rows[0].incident_id.has_value());
  auto event = event_from_json(rows[0].event);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->cause.substr(0, 68),
            "the store could not take pings for 30s (the database is unreachable)");
  EXPECT_EQ(event->since, from);
}

TEST_F(PlannerTest, MonitorsWithNoChannelWriteNothing) {
  Incident incident{4, "quiet", clock_.system_time(), std::nullopt, "x", ""};
  EXPECT_TRUE(
      apply(config_.monitors[1], MonitorStatus::kUp, MonitorStatus::kDown, incident, std::nullopt, incident)
          .empty());
}

}  // namespace
}  // namespace trainwatch::alerting

namespace trainwatch::alerting {
namespace {

// A tls monitor near expiry: up with a warning, told once to the channels that do not page.
class PlannerWarningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadedConfig loaded = load_config_text(
        "monitors:\n"
        "  - {name: cert, type: tls, host: h, port: 443, notify: [chat, pd, am]}\n"
        "notifications:\n"
        "  - {name: chat, type: ntfy, topic: t}\n"
        "  - {name: pd, type: pagerduty, routing_key: k}\n"
        "  - {name: am, type: alertmanager, url: 'http://127.0.0.1:9093'}\n",
        "c.yaml");
    ASSERT_TRUE(loaded.config);
    config_ = *loaded.config;
    planner_.configure(config_, {"chat", "pd", "am"});
  }

  std::vector<NewDelivery> up_result(bool warning) {
    MonitorState state;
    state.status = MonitorStatus::kUp;
    CheckResult r;
    r.at = clock_.system_time();
    r.ok = true;
    r.warning = warning;
    r.cause = "certificate for h expires in 9 days (2026-12-09T10:00:00Z)";
    const std::optional<Incident> none;
    return planner_.on_apply(engine::AppliedResult{
        config_.monitors[0], state, state, engine::Transition::kUnchanged, r, none, std::nullopt, none});
  }

  testing::ManualClock clock_;
  AlertPlanner planner_{clock_, [] {}};
  Config config_;
};

TEST_F(PlannerWarningTest, AWarningIsSentOnceAndNeverPages) {
  auto rows = up_result(true);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].channel, "chat");
  EXPECT_EQ(rows[0].kind, "warning");
  EXPECT_FALSE(rows[0].incident_id);
  EXPECT_EQ(rows[0].due, clock_.system_time());
  auto event = event_from_json(rows[0].event);
  ASSERT_TRUE(event.ok());
  EXPECT_EQ(event->kind, EventKind::kWarning);
  EXPECT_EQ(event->cause, "certificate for h expires in 9 days (2026-12-09T10:00:00Z)");
  EXPECT_EQ(event->target, "h:443");

  clock_.advance(minutes(60));
  EXPECT_TRUE(up_result(true).empty());  // the same spell: said already
}

TEST_F(PlannerWarningTest, AResultWithoutAWarningEndsTheSpell) {
  EXPECT_EQ(up_result(true).size(), 1u);
  EXPECT_TRUE(up_result(false).empty());  // renewed
  EXPECT_EQ(up_result(true).size(), 1u);  // a later spell is told again
}

}  // namespace
}  // namespace trainwatch::alerting
