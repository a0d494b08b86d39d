#include "config/loader.h"

#include <gtest/gtest.h>

#include <map>

namespace trainwatch {
namespace {

std::optional<std::string> fake_env(const std::string& name) {
  static const std::map<std::string, std::string> kEnv = {
      {"HEALTH_HOST", "10.0.0.7"},
      {"TOKEN", "s3cret"},
      {"STORE_URL", "postgresql://tw:pw-from-env@db:5432/tw"}};
  auto it = kEnv.find(name);
  if (it == kEnv.end()) return std::nullopt;
  return it->second;
}

LoadedConfig load(const std::string& text) { return load_config_text(text, "tw.yaml", fake_env); }

std::vector<std::string> errors_of(const std::string& text) {
  std::vector<std::string> lines;
  for (const auto& e : load(text).errors) lines.push_back(e.to_string());
  return lines;
}

TEST(LoadConfig, TheIssueExampleLoadsWithDefaults) {
  auto loaded = load(R"(server:
  listen: 127.0.0.1:8080
  data_dir: ./data
monitors:
  - name: rank0-health
    type: http
    url: http://127.0.0.1:8765/health
    interval: 60s
    timeout: 10s
    retries: 1
    conditions:
      - "[STATUS] == 200"
      - "[BODY].status == ok"
      - "[BODY].training.overflow_steps == 0"
  - name: chat-server
    type: tcp
    host: 127.0.0.1
    port: 8080
    interval: 60s
)");
  ASSERT_TRUE(loaded.config) << loaded.errors.front().to_string();
  const Config& c = *loaded.config;
  EXPECT_EQ(c.server.listen.host, "127.0.0.1");
  EXPECT_EQ(c.server.listen.port, 8080);
  ASSERT_EQ(c.monitors.size(), 2u);
  const auto& http = std::get<HttpCheckSpec>(c.monitors[0].spec);
  EXPECT_EQ(http.conditions.size(), 3u);
  EXPECT_EQ(http.method, "GET");
  EXPECT_TRUE(http.follow_redirects);
  EXPECT_EQ(c.monitors[0].retries, 1);
  EXPECT_EQ(c.monitors[0].where.line, 5);
  const auto& tcp = std::get<TcpCheckSpec>(c.monitors[1].spec);
  EXPECT_EQ(tcp.port, 8080);
  EXPECT_EQ(c.monitors[1].timeout, Millis(10'000));  // default
}

// A file that is one scalar or a list (a stray line, a half-written file) is an error
// naming what the root should be, never an exception out of the loader (found by the fuzzer).
TEST(LoadConfig, ARootThatIsNoMappingIsAnErrorNotAThrow) {
  for (const char* text : {"max_checks_in_flight:# 8\n", "just words\n", "- monitors\n"}) {
    auto loaded = load(text);
    EXPECT_FALSE(loaded.config) << text;
    EXPECT_FALSE(loaded.monitors_listed) << text;
    EXPECT_FALSE(loaded.errors.empty()) << text;
  }
}

TEST(LoadConfig, AnEmptyFileIsRefusedAndAnEmptyListIsNot) {
  // White space and comments only: an editor's truncate caught before its write.
  for (const char* empty : {"", "   \n\n", "# monitors come later\n"}) {
    auto loaded = load(empty);
    EXPECT_FALSE(loaded.config) << empty;
    ASSERT_EQ(loaded.errors.size(), 1u);
    EXPECT_EQ(loaded.errors[0].to_string(),
              "tw.yaml:1:1: file: is empty; expected a YAML mapping of sections (write `monitors: []` for an "
              "installation with no monitors)");
  }
  auto listed = load("monitors: []\n");
  ASSERT_TRUE(listed.config);
  EXPECT_EQ(listed.config->server.data_dir, "./data");
  EXPECT_TRUE(listed.config->monitors.empty());
  EXPECT_TRUE(listed.monitors_listed);
  auto jobs_only = load("jobs:\n  auto_create: true\n");
  ASSERT_TRUE(jobs_only.config);
  EXPECT_FALSE(jobs_only.monitors_listed);
}

TEST(LoadConfig, EnvironmentReferencesAreExpanded) {
  auto loaded = load(R"(monitors:
  - name: a
    type: http
    url: http://${HEALTH_HOST}:8765/health
    headers:
      Authorization: Bearer ${TOKEN}
)");
  ASSERT_TRUE(loaded.config);
  const auto& http = std::get<HttpCheckSpec>(loaded.config->monitors[0].spec);
  EXPECT_EQ(http.url, "http://10.0.0.7:8765/health");
  EXPECT_EQ(http.headers.at(0).second, "Bearer s3cret");
}

struct BadCase {
  const char* yaml;
  const char* error;
};

class LoadConfigErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoadConfigErrors, NameFileLineColumnWhatAndWhatIsExpected) {
  auto loaded = load(GetParam().yaml);
  EXPECT_FALSE(loaded.config);
  auto lines = errors_of(GetParam().yaml);
  ASSERT_FALSE(lines.empty());
  bool found = false;
  for (const auto& line : lines) found = found || line.rfind(GetParam().error, 0) == 0;
  EXPECT_TRUE(found) << "wanted: " << GetParam().error << "\ngot: " << ::testing::PrintToString(lines);
}

constexpr const char* kHead = "monitors:\n  - name: a\n    type: http\n    url: http://h/\n";

INSTANTIATE_TEST_SUITE_P(
    EveryMessage, LoadConfigErrors,
    ::testing::Values(
        BadCase{"server: [1, 2]\n",
                "tw.yaml:1:9: server: found a list; expected a mapping of keys to values"},
        BadCase{"server:\n  listen: localhost\n",
                "tw.yaml:2:11: server.listen: found 'localhost'; expected HOST:PORT"},
        BadCase{"server:\n  listen: h:99999\n",
                "tw.yaml:2:11: server.listen: found 'h:99999'; expected HOST:PORT"},
        BadCase{"server:\n  datadir: x\n", "tw.yaml:2:3: server.datadir: unknown key; expected one of:"},
        BadCase{"server:\n  advertise: replica-2\n",
                "tw.yaml:2:14: server.advertise: found 'replica-2'; expected HOST:PORT at which the other "
                "replicas reach this one"},
        BadCase{"server:\n  advertise: replica-2:0\n",
                "tw.yaml:2:14: server.advertise: found 'replica-2:0'; expected HOST:PORT"},
        BadCase{"monitorz: []\n",
                "tw.yaml:1:1: monitorz: unknown key; expected one of: auth, jobs, maintenance, "
                "monitors, notifications, retention, server, status_pages"},
        BadCase{"monitors: {a: 1}\n", "tw.yaml:1:11: monitors: found a mapping; expected a list of monitors"},
        BadCase{"monitors:\n  - type: http\n    url: http://h/\n",
                "tw.yaml:2:5: monitors[0].name: missing; expected a value"},
        BadCase{"monitors:\n  - name: A b\n    type: tcp\n    host: h\n    port: 1\n",
                "tw.yaml:2:11: monitors[0].name: found 'A b'; expected lower-case letters"},
        BadCase{"monitors:\n  - name: a\n    type: ping\n",
                "tw.yaml:3:11: monitors[0].type: found 'ping'; expected one of: http, tcp"},
        BadCase{"monitors:\n  - name: a\n    url: http://h/\n",
                "tw.yaml:2:5: monitors[0].type: missing; expected a value"},
        BadCase{"monitors:\n  - name: a\n    type: http\n",
                "tw.yaml:2:5: monitors[0].url: missing; expected a value"},
        BadCase{
            "monitors:\n  - name: a\n    type: http\n    url: ftp://h/\n",
            "tw.yaml:4:10: monitors[0].url: found 'ftp://h/'; expected an http:// or https:// URL with a host"},
        BadCase{
            "monitors:\n  - name: a\n    type: http\n    url: http://h/\n    interval: 5\n",
            "tw.yaml:5:15: monitors[0].interval: found '5'; expected a duration such as 500ms, 30s, 5m, 1h or 1d"},
        BadCase{"monitors:\n  - name: a\n    type: http\n    url: http://h/\n    interval: 10ms\n",
                "tw.yaml:5:15: monitors[0].interval: found 10ms; expected at least 100ms"},
        BadCase{"monitors:\n  - name: a\n    type: http\n    url: http://h/\n    retries: -1\n",
                "tw.yaml:5:14: monitors[0].retries: found '-1'; expected a whole number from 0 to 100"},
        BadCase{"monitors:\n  - name: a\n    type: http\n    url: http://h/\n    method: FETCH\n",
                "tw.yaml:5:13: monitors[0].method: found 'FETCH'; expected GET, HEAD"},
        BadCase{"monitors:\n  - name: a\n    type: http\n    url: http://h/\n    tls_verify: yes\n",
                "tw.yaml:5:17: monitors[0].tls_verify: found 'yes'; expected true or false"},
        BadCase{
            "monitors:\n  - name: a\n    type: http\n    url: http://h/\n    conditions: \"[STATUS] == 200\"\n",
            "tw.yaml:5:17: monitors[0].conditions: found '[STATUS] == 200'; expected a list of strings"},
        BadCase{
            "monitors:\n  - name: a\n    type: http\n    url: http://h/\n    conditions:\n      - \"[BOD] == 1\"\n",
            "tw.yaml:6:9: monitors[0].conditions[0]: unknown placeholder [BOD]"},
        BadCase{
            "monitors:\n  - name: a\n    type: http\n    url: http://h/\n    headers: [x]\n",
            "tw.yaml:5:14: monitors[0].headers: found a list; expected a mapping of header names to values"},
        BadCase{"monitors:\n  - name: a\n    type: http\n    url: http://${NOPE}/\n",
                "tw.yaml:4:10: monitors[0].url: environment variable NOPE is not set"},
        BadCase{"monitors:\n  - name: a\n    type: tcp\n    host: h\n",
                "tw.yaml:2:5: monitors[0].port: missing; expected a port number"},
        BadCase{"store:\n  url: ${NO_STORE_URL}\n",
                "tw.yaml:2:8: store.url: environment variable NO_STORE_URL is not set"},
        BadCase{
            "store:\n  url: mysql://tw:hunter2@db/tw\n",
            "tw.yaml:2:8: store.url: found 'mysql://***@db/tw'; expected postgresql://USER@HOST:PORT/DATABASE"},
        BadCase{"store:\n  url: postgresql://tw:hunter2@db/tw?sslmode=sometimes\n",
                "tw.yaml:2:8: store.url: found sslmode 'sometimes'; expected disable, allow, prefer"},
        BadCase{"monitors:\n  - name: a\n    type: tcp\n    host: h\n    port: 0\n",
                "tw.yaml:5:11: monitors[0].port: found '0'; expected a whole number from 1 to 65535"},
        BadCase{"monitors:\n  - name: a\n    type: tcp\n    host: h\n    port: 1\n    url: http://h/\n",
                "tw.yaml:6:5: monitors[0].url: unknown key"},
        BadCase{
            "monitors:\n  - name: a\n    type: tcp\n    host: h\n    port: 1\n  - name: a\n    type: tcp\n    host: h\n    port: 2\n",
            "tw.yaml:6:11: monitors[1].name: found 'a' again; expected a unique name (first used at line 2)"},
        BadCase{"monitors:\n  - {name: a, type: tcp, host: h, port: 1, depends_on: [b]}\n"
                "  - {name: b, type: tcp, host: h, port: 1, depends_on: [c]}\n"
                "  - {name: c, type: tcp, host: h, port: 1, depends_on: [a]}\n",
                "tw.yaml:4:57: monitors[2].depends_on[0]: found the cycle a -> b -> c -> a; expected "
                "dependencies without a cycle"},
        BadCase{"monitors:\n  - {name: a, type: tcp, host: h, port: 1, depends_on: [nodes]}\n",
                "tw.yaml:2:57: monitors[0].depends_on[0]: found 'nodes'; expected the name of a monitor"},
        BadCase{"monitors:\n  - name: a\n    type: tcp\n    host: h\n    port: 1\n    depends_on: [a]\n",
                "tw.yaml:6:18: monitors[0].depends_on[0]: found 'a', the monitor itself; expected another "
                "monitor's name"},
        BadCase{"monitors:\n  - {name: a, type: tcp, host: h, port: 1, depends_on: b}\n",
                "tw.yaml:2:56: monitors[0].depends_on: found 'b'; expected a list of strings"},
        BadCase{"monitors:\n  - name: a\n    type: job\n    world_size: 0\n",
                "tw.yaml:4:17: monitors[0].world_size: found '0'; expected a whole number from 1 to 1000000"},
        BadCase{
            "jobs:\n  max_ranks_per_node: 2000\n",
            "tw.yaml:2:23: jobs.max_ranks_per_node: found '2000'; expected a whole number from 1 to 1024"},
        BadCase{"jobs:\n  expire_after: 500ms\n",
                "tw.yaml:2:17: jobs.expire_after: found less than 1s; expected at least 1s"},
        BadCase{
            "monitors:\n  - name: a\n    type: job\n    thresholds:\n      straggler_ratio: 0.5\n",
            "tw.yaml:5:24: monitors[0].thresholds.straggler_ratio: found '0.5'; expected a number from 1 to 100"},
        BadCase{"monitors:\n  - name: a\n    type: job\n    thresholds:\n      step_timeout: 0s\n",
                "tw.yaml:5:21: monitors[0].thresholds.step_timeout: found 0s; expected more than 0"},
        BadCase{"jobs:\n  auto_create: maybe\n",
                "tw.yaml:2:16: jobs.auto_create: found 'maybe'; expected true or false"},
        BadCase{"jobs:\n  tokens: x\n", "tw.yaml:2:3: jobs.tokens: unknown key; expected one of:"},
        BadCase{"jobs:\n  notify: [nope]\n",
                "tw.yaml:2:12: jobs.notify[0]: found 'nope'; expected a channel from notifications"},
        BadCase{"monitors:\n  - name: a\n   bad indent: [\n", "tw.yaml:"}));

TEST(LoadConfig, TheJobIssueExampleLoadsAsWritten) {
  auto loaded = load(R"(notifications:
  - name: ml-slack
    type: webhook
    url: http://127.0.0.1:9000/slack
  - name: oncall-email
    type: webhook
    url: http://127.0.0.1:9000/email
jobs:
  auto_create: true
  token: ${TOKEN}      # agents send it as a bearer token
  notify: [ml-slack]   # channels for auto-created jobs (else the default channels)
monitors:
  - name: llama-7b
    type: job
    world_size: 64
    notify: [ml-slack, oncall-email]
    thresholds:
      step_timeout_min: 3s
      checkpoint_timeout: 20m
)");
  ASSERT_TRUE(loaded.config) << loaded.errors.at(0).to_string();
  const Config& c = *loaded.config;
  EXPECT_TRUE(c.jobs.auto_create);
  EXPECT_EQ(c.jobs.token, "s3cret");
  EXPECT_EQ(c.jobs.notify, std::vector<std::string>{"ml-slack"});
  EXPECT_EQ(c.jobs.max_ranks, 262'144);  // the bounds' defaults
  EXPECT_EQ(c.jobs.max_ranks_per_node, 1'024);
  EXPECT_EQ(c.jobs.expire_after, Millis(24 * 3'600'000));
  const MonitorConfig& m = c.monitors.at(0);
  EXPECT_EQ(m.type, MonitorType::kJob);
  EXPECT_EQ(m.interval, Millis(1'000));  // jobs are judged every second unless told otherwise
  const auto& job = std::get<JobCheckSpec>(m.spec);
  EXPECT_EQ(job.world_size, 64);
  EXPECT_EQ(m.notify, (std::vector<std::string>{"ml-slack", "oncall-email"}));
  EXPECT_EQ(job.thresholds.step_timeout_min, Millis(3'000));
  EXPECT_FALSE(job.thresholds.step_timeout);  // learned
  EXPECT_EQ(job.thresholds.checkpoint_timeout, Millis(1'200'000));
  EXPECT_EQ(job.thresholds.startup_timeout, Millis(1'800'000));
}

TEST(LoadConfig, JobBoundsAreRead) {
  auto loaded = load("jobs:\n  max_ranks: 16384\n  max_ranks_per_node: 64\n  expire_after: 2h\n");
  ASSERT_TRUE(loaded.config) << loaded.errors.at(0).to_string();
  EXPECT_EQ(loaded.config->jobs.max_ranks, 16'384);
  EXPECT_EQ(loaded.config->jobs.max_ranks_per_node, 64);
  EXPECT_EQ(loaded.config->jobs.expire_after, Millis(7'200'000));
}

TEST(LoadConfig, ReportsEveryErrorNotJustTheFirst) {
  auto lines = errors_of(std::string(kHead) + "    interval: 5x\n    timeout: soon\n    retries: many\n");
  EXPECT_EQ(lines.size(), 3u) << ::testing::PrintToString(lines);
}

TEST(LoadConfig, MissingFileIsAnError) {
  auto loaded = load_config_file("/nonexistent/trainwatch.yaml");
  ASSERT_EQ(loaded.errors.size(), 1u);
  EXPECT_EQ(loaded.errors[0].to_string(),
            "/nonexistent/trainwatch.yaml:0:0: file: cannot be read; expected a readable YAML file");
}

TEST(SameCheck, DetectsAnyChangeThatAltersTheCheck) {
  auto a = load(std::string(kHead) + "    interval: 5s\n");
  auto b = load(std::string(kHead) + "    interval: 5s\n");
  auto c = load(std::string(kHead) + "    interval: 6s\n");
  auto d = load(std::string(kHead) + "    interval: 5s\n    conditions: [\"[STATUS] == 201\"]\n");
  ASSERT_TRUE(a.config && b.config && c.config && d.config);
  EXPECT_TRUE(same_check(a.config->monitors[0], b.config->monitors[0]));
  EXPECT_FALSE(same_check(a.config->monitors[0], c.config->monitors[0]));
  EXPECT_FALSE(same_check(a.config->monitors[0], d.config->monitors[0]));
}

TEST(LoadConfig, StoreUrlComesFromTheEnvironmentAndDefaultsToSqlite) {
  auto none = load("monitors: []\n");
  ASSERT_TRUE(none.config) << (none.errors.empty() ? "" : none.errors[0].to_string());
  EXPECT_EQ(none.config->store.url, "");
  auto pg = load("store:\n  url: ${STORE_URL}\n");
  ASSERT_TRUE(pg.config) << (pg.errors.empty() ? "" : pg.errors[0].to_string());
  EXPECT_EQ(pg.config->store.url, "postgresql://tw:pw-from-env@db:5432/tw");
}

TEST(LoadConfig, AMalformedStoreUrlNeverShowsItsPassword) {
  for (const auto& line : errors_of("store:\n  url: postgres//tw:hunter2@db/tw\n")) {
    EXPECT_EQ(line.find("hunter2"), std::string::npos) << line;
  }
  EXPECT_EQ(errors_of("store:\n  url: postgres//tw:hunter2@db/tw\n").size(), 1u);
}

// server.public_url: kept without its trailing slash; anything but an http(s) address with
// a host is refused where it stands.
TEST(LoadConfig, PublicUrlIsAnHttpAddressKeptWithoutItsTrailingSlash) {
  auto loaded = load("server:\n  public_url: https://tw.example.org/trainwatch/\n");
  ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0].to_string());
  EXPECT_EQ(loaded.config->server.public_url, "https://tw.example.org/trainwatch");
  EXPECT_EQ(load("monitors: []\n").config->server.public_url, "");
  EXPECT_EQ(errors_of("server:\n  public_url: tw.example.org\n"),
            std::vector<std::string>{
                "tw.yaml:2:15: server.public_url: found 'tw.example.org'; expected the http:// or https:// "
                "address people reach this server at, such as https://trainwatch.example.org"});
  EXPECT_EQ(errors_of("server:\n  public_url: ftp://tw.example.org\n").size(), 1u);
  EXPECT_EQ(errors_of("server:\n  public_url: https://tw.example.org/?a=b\n").size(), 1u);
}

TEST(LoadConfig, DependsOnMayNameAMonitorListedLater) {
  auto loaded = load(
      "monitors:\n"
      "  - {name: node-1-health, type: http, url: http://n1/health, depends_on: [llama]}\n"
      "  - {name: llama, type: job}\n");
  ASSERT_TRUE(loaded.config) << ::testing::PrintToString(errors_of(""));
  EXPECT_EQ(loaded.config->monitors[0].depends_on, std::vector<std::string>{"llama"});
  EXPECT_TRUE(loaded.config->monitors[1].depends_on.empty());
}

}  // namespace
}  // namespace trainwatch

namespace trainwatch {
namespace {

TEST(LoadTlsMonitor, KeysAndDefaults) {
  const std::string text =
      "monitors:\n"
      "  - {name: a, type: tls, host: example.test, port: 443}\n"
      "  - {name: b, type: tls, host: 10.0.0.1, port: 8443, server_name: api.test, ca_file: /etc/ca.pem,\n"
      "     warn_before: 30d, down_before: 7d}\n"
      "  - {name: c, type: tls, host: h, port: 1, down_before: 21d}\n";
  auto loaded = load(text);
  ASSERT_TRUE(loaded.config) << ::testing::PrintToString(errors_of(text));
  const auto& a = std::get<TlsCheckSpec>(loaded.config->monitors[0].spec);
  EXPECT_EQ(loaded.config->monitors[0].type, MonitorType::kTls);
  EXPECT_EQ(a.warn_before, Millis(14 * 86'400'000LL));
  EXPECT_EQ(a.down_before, Millis(0));
  const auto& b = std::get<TlsCheckSpec>(loaded.config->monitors[1].spec);
  EXPECT_EQ(b.server_name, "api.test");
  EXPECT_EQ(b.ca_file, "/etc/ca.pem");
  EXPECT_EQ(b.warn_before, Millis(30 * 86'400'000LL));
  EXPECT_EQ(b.down_before, Millis(7 * 86'400'000LL));
  // An unset warn_before never falls below the DOWN: the warning comes first.
  EXPECT_EQ(std::get<TlsCheckSpec>(loaded.config->monitors[2].spec).warn_before, Millis(21 * 86'400'000LL));
  auto changed = loaded.config->monitors[1];
  std::get<TlsCheckSpec>(changed.spec).server_name = "other.test";
  EXPECT_FALSE(same_check(loaded.config->monitors[1], changed));
  EXPECT_TRUE(same_check(loaded.config->monitors[1], loaded.config->monitors[1]));
}

INSTANTIATE_TEST_SUITE_P(
    TlsMessages, LoadConfigErrors,
    ::testing::Values(
        BadCase{"monitors:\n  - name: a\n    type: tls\n    host: h\n",
                "tw.yaml:2:5: monitors[0].port: missing; expected the port TLS is served on, such as 443"},
        BadCase{
            "monitors:\n  - name: a\n    type: tls\n    host: h\n    port: 443\n"
            "    warn_before: 2d\n    down_before: 3d\n",
            "tw.yaml:6:18: monitors[0].warn_before: found 2d, less than down_before 3d; expected at least "
            "down_before"},
        BadCase{"monitors:\n  - name: a\n    type: http\n    url: http://h/\n"
                "    conditions: [\"[CERTIFICATE_EXPIRATION] > 168h\"]\n",
                "tw.yaml:5:18: monitors[0].conditions[0]: found [CERTIFICATE_EXPIRATION] on an http:// url"},
        BadCase{
            "monitors:\n  - name: a\n    type: http\n    url: https://h/\n"
            "    conditions: [\"[CERTIFICATE_EXPIRATION] > soon\"]\n",
            "tw.yaml:5:18: monitors[0].conditions[0]: found 'soon' at character 28; expected a duration"}));

TEST(LoadConfig, CertificateExpirationOnHttpsLoads) {
  auto loaded = load(
      "monitors:\n  - name: a\n    type: http\n    url: https://h/\n"
      "    conditions: [\"[CERTIFICATE_EXPIRATION] > 168h\"]\n");
  ASSERT_TRUE(loaded.config);
}

}  // namespace
}  // namespace trainwatch
