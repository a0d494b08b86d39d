// The Alertmanager provider's requests: one identity per incident, whatever the event,
// and a firing alert's endsAt a few re-send periods ahead, so that Alertmanager keeps it
// only as long as trainwatch keeps re-sending it.
#include <gtest/gtest.h>
#include <boost/json.hpp>

#include "alerting/channels.h"
#include "alerting/message.h"
#include "config/loader.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

namespace json = boost::json;
using std::chrono::minutes;
using std::chrono::seconds;

const SystemTime kT0 = from_unix_ms(1'700'000'000'000);

std::vector<Channel> channels_of(const std::string& channel_yaml, std::vector<ConfigError>& errors) {
  LoadedConfig loaded = load_config_text(
      "monitors:\n"
      "  - {name: a, type: tcp, host: h, port: 1, notify: [am]}\n"
      "notifications:\n" +
          channel_yaml,
      "c.yaml");
  EXPECT_TRUE(loaded.config);
  if (!loaded.config) return {};
  return build_channels(*loaded.config, errors);
}

std::shared_ptr<const Provider> alertmanager(const std::string& extra = "") {
  std::vector<ConfigError> errors;
  auto channels = channels_of(
      "  - {name: am, type: alertmanager, url: 'http://am:9093', labels: {team: ml}" + extra + "}\n", errors);
  EXPECT_TRUE(errors.empty());
  if (channels.size() != 1) {
    ADD_FAILURE() << "no channel built";
    return nullptr;
  }
  return channels[0].provider;
}

AlertEvent event(EventKind kind) {
  AlertEvent e;
  e.kind = kind;
  e.monitor = "trainer";
  e.monitor_type = "http";
  e.target = "http://10.0.0.5:8765/health";
  e.incident_id = 7;
  e.cause = "HTTP 503";
  e.at = kT0;
  e.since = kT0;
  if (kind == EventKind::kUp) e.ended = kT0 + minutes(30);
  return e;
}

json::array alerts_in(const OutboundRequest& r) {
  EXPECT_EQ(r.url, "http://am:9093/api/v2/alerts");
  return json::parse(r.body).as_array();
}

SystemTime ends_at(const json::value& alert) {
  return parse_rfc3339(alert.at("endsAt").as_string()).value_or(SystemTime{});
}

TEST(AlertmanagerTest, FiringAlertsEndFourReSendPeriodsAheadAndTheRecoveryEndsThem) {
  auto provider = alertmanager(", resend_every: 2s");
  ASSERT_TRUE(provider);
  ASSERT_NE(provider->resender(), nullptr);
  EXPECT_EQ(provider->resender()->resend_every(), seconds(2));

  const SystemTime now = kT0 + minutes(1);
  const auto down = alerts_in(
      provider->build(event(EventKind::kDown), render_message(event(EventKind::kDown), now), 1, now));
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(ends_at(down[0]), now + seconds(8));
  EXPECT_EQ(down[0].at("startsAt").as_string(), format_rfc3339(kT0));

  const auto up =
      alerts_in(provider->build(event(EventKind::kUp), render_message(event(EventKind::kUp), now), 2, now));
  EXPECT_EQ(ends_at(up[0]), kT0 + minutes(30));
}

TEST(AlertmanagerTest, EveryEventOfAnIncidentAndItsReSendsCarryTheSameLabels) {
  auto provider = alertmanager();
  ASSERT_TRUE(provider);
  EXPECT_EQ(provider->resender()->resend_every(), minutes(1));  // Prometheus' resend delay
  const SystemTime now = kT0 + minutes(3);
  std::vector<json::value> labels;
  for (auto kind : {EventKind::kDown, EventKind::kReminder, EventKind::kUp}) {
    labels.push_back(
        alerts_in(provider->build(event(kind), render_message(event(kind), now), 1, now))[0].at("labels"));
  }
  AlertEvent other = event(EventKind::kDown);
  other.monitor = "loader";
  other.incident_id = 8;
  const auto resent = alerts_in(provider->resender()->build_resend(
      {{event(EventKind::kDown), render_message(event(EventKind::kDown), now)},
       {other, render_message(other, now)}},
      now));
  ASSERT_EQ(resent.size(), 2u);
  labels.push_back(resent[0].at("labels"));
  for (const auto& l : labels) EXPECT_EQ(l, labels[0]) << json::serialize(l);
  EXPECT_EQ(labels[0].at("incident"), "7");
  EXPECT_EQ(labels[0].at("team"), "ml");
  EXPECT_EQ(resent[1].at("labels").at("monitor"), "loader");
  EXPECT_EQ(ends_at(resent[0]), now + minutes(4));
  EXPECT_EQ(resent[0].at("startsAt").as_string(), format_rfc3339(kT0));
}

// generatorURL: the page under server.public_url, else the checked URL.
TEST(AlertmanagerTest, GeneratorUrlIsThePageThatExplainsTheAlert) {
  auto provider = alertmanager();
  ASSERT_TRUE(provider);
  AlertEvent e = event(EventKind::kDown);
  e.url = "https://tw.example.org/monitors/rank0-health";
  EXPECT_EQ(alerts_in(provider->build(e, render_message(e, kT0), 1, kT0))[0].at("generatorURL"),
            "https://tw.example.org/monitors/rank0-health");
  const AlertEvent plain = event(EventKind::kDown);
  EXPECT_EQ(alerts_in(provider->build(plain, render_message(plain, kT0), 2, kT0))[0].at("generatorURL"),
            "http://10.0.0.5:8765/health")
      << "without public_url: the checked URL";
}

// A job's alert in the shipped rules' vocabulary (deploy/prometheus/trainwatch.rules.yml),
// so that one inhibit rule ties them (docs/configuration.md).
TEST(AlertmanagerTest, AJobsAlertNamesTheCulpritInTheRulesLabels) {
  auto provider = alertmanager();
  ASSERT_TRUE(provider);
  AlertEvent e = event(EventKind::kDown);
  e.monitor = "llama";
  e.monitor_type = "job";
  e.target = "";
  e.labels = {{"training_job", "llama"}, {"reason", "rank_gone"}, {"rank", "5"}, {"node", "node-b"}};
  const auto alert = alerts_in(provider->build(e, render_message(e, kT0), 1, kT0))[0];
  const auto& labels = alert.at("labels").as_object();
  EXPECT_EQ(labels.at("alertname"), "TrainwatchJobDown");
  EXPECT_EQ(labels.at("severity"), "page");
  EXPECT_EQ(labels.at("source"), "trainwatch");
  EXPECT_EQ(labels.at("training_job"), "llama");
  EXPECT_EQ(labels.at("rank"), "5");
  EXPECT_EQ(labels.at("node"), "node-b");
  EXPECT_EQ(labels.at("reason"), "rank_gone");
  EXPECT_FALSE(alert.as_object().contains("generatorURL")) << "no public_url and no checked URL";

  const AlertEvent other = event(EventKind::kDown);
  const auto plain = alerts_in(provider->build(other, render_message(other, kT0), 2, kT0))[0];
  EXPECT_EQ(plain.at("labels").at("alertname"), "TrainwatchMonitorDown");
  EXPECT_EQ(plain.at("labels").at("severity"), "page");
}

TEST(AlertmanagerTest, ResendEveryMustBeASecondOrMore) {
  std::vector<ConfigError> errors;
  channels_of("  - {name: am, type: alertmanager, url: 'http://am:9093', resend_every: 500ms}\n", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].to_string(),
            "c.yaml:4:73: notifications.am.resend_every: found 500ms; expected at least 1s");
}

}  // namespace
}  // namespace trainwatch::alerting
