// What only the PostgreSQL store has to show: a server that goes away and comes back,
// refused connections, and a schema newer than the binary. The behaviour it shares with
// SQLite is in the conformance suite.
#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "storage/conformance.h"
#include "storage/postgres/member_registry.h"
#include "storage/postgres/migrations.h"
#include "storage/store_errors.h"

namespace trainwatch::testing {
namespace {

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto url = PgServer::instance().create_database();
    ASSERT_TRUE(url.ok()) << url.error().message;
    url_ = *url;
  }
  // Replicas "a" and "b", both alive in the members table.
  void two_live_replicas() {
    postgres::PgMemberRegistry members(url_);
    ASSERT_TRUE(members.beat(MemberRow{"a", "host:1", "c", {}, {}}).ok());
    ASSERT_TRUE(members.beat(MemberRow{"b", "host:2", "c", {}, {}}).ok());
  }
  // `member`'s last beat moves 7 s back: past the 6 s ttl the claims use, as if it died.
  void silence(const std::string& member) {
    pqxx::connection conn(url_);
    pqxx::work tx(conn);
    tx.exec_params("UPDATE members SET seen_at = now() - interval '7 seconds' WHERE id = $1", member);
    tx.commit();
  }

  std::string url_;
};

TEST_F(PostgresStoreTest, WhileTheServerIsDownWritesFailUnavailableAndCommitAgainWhenItIsBack) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  ASSERT_TRUE(write_and_wait(store, SaveState{"api", up_state(kT0)}).ok());

  ASSERT_TRUE(PgServer::instance().stop().ok());
  for (int i = 0; i < 3; ++i) {
    PingRecord r;
    r.monitor = "ckpt";
    r.ping.at = from_unix_ms(kT0 + i);
    Status refused = write_and_wait(store, RecordPing{r});
    ASSERT_FALSE(refused.ok()) << "a ping acknowledged while the database is down";
    EXPECT_EQ(refused.error().code, store_error::kUnavailable);
  }
  const WriteHealth down = store.write_health();
  EXPECT_TRUE(down.refusing);
  EXPECT_EQ(down.failures_by_reason.at("unavailable"), 3u);
  EXPECT_EQ(down.failed_pings, 3u);
  auto read = store.load_states();
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, store_error::kRead);

  ASSERT_TRUE(PgServer::instance().start().ok());
  // The writer retries after its backoff; a write succeeds within a few of them.
  Status again = make_error("none", "");
  for (int i = 0; i < 100 && !again.ok(); ++i) {
    again = write_and_wait(store, SaveState{"db", up_state(kT0)});
    if (!again.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_FALSE(store.write_health().refusing);
  auto states = store.load_states();
  ASSERT_TRUE(states.ok()) << states.error().message;
  EXPECT_EQ(states->size(), 2u);
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsAnErrorThatNeverShowsThePassword) {
  const std::string url = "postgresql://tw:s3cret-pw@127.0.0.1:1/trainwatch";
  auto opened = postgres::PostgresStore::open(url);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, store_error::kUnavailable);
  EXPECT_EQ(opened.error().message.find("s3cret-pw"), std::string::npos) << opened.error().message;
  EXPECT_NE(opened.error().message.find("127.0.0.1"), std::string::npos) << opened.error().message;
}

TEST_F(PostgresStoreTest, AWrongPasswordIsAnAuthErrorThatNeverShowsThePassword) {
  {
    pqxx::connection admin(url_);
    pqxx::nontransaction tx(admin);
    tx.exec(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tw') THEN "
        "CREATE ROLE tw LOGIN PASSWORD 'right-pw'; END IF; END $$");
  }
  // The cluster trusts every loopback connection (initdb -A trust), so a password is
  // checked only where pg_hba says so: put a line for tw first for this test and reload.
  pqxx::connection admin(url_);
  pqxx::nontransaction tx(admin);
  const std::string hba = tx.exec1("SHOW hba_file")[0].as<std::string>();
  ASSERT_EQ(std::system(("cp " + hba + " " + hba +
                         ".trust && printf 'host all tw 127.0.0.1/32 scram-sha-256\\n' > " + hba +
                         ".new && cat " + hba + ".trust >> " + hba + ".new && mv " + hba + ".new " + hba +
                         " && chown postgres " + hba)
                            .c_str()),
            0);
  tx.exec("SELECT pg_reload_conf()");
  const std::string base = url_.substr(url_.find('@'));  // @127.0.0.1:PORT/DB
  auto refused = postgres::PostgresStore::open("postgresql://tw:wrong-pw" + base);
  auto accepted = postgres::PostgresStore::open("postgresql://tw:right-pw" + base);
  ASSERT_EQ(std::system(("mv " + hba + ".trust " + hba).c_str()), 0);
  tx.exec("SELECT pg_reload_conf()");

  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, store_error::kAuth);
  EXPECT_EQ(refused.error().message.find("wrong-pw"), std::string::npos) << refused.error().message;
  // tw may connect but owns nothing: opening fails later, never on the password.
  if (!accepted.ok()) {
    EXPECT_NE(accepted.error().code, store_error::kAuth) << accepted.error().message;
  }
}

TEST_F(PostgresStoreTest, ADatabaseFromANewerTrainwatchIsRefusedNamingBothVersions) {
  { ASSERT_TRUE(postgres::PostgresStore::open(url_).ok()); }
  {
    pqxx::connection raw(url_);
    pqxx::work tx(raw);
    tx.exec(
        "INSERT INTO schema_version (version, description, applied_ms) VALUES (99, 'from the future', 0)");
    tx.commit();
  }
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, store_error::kSchemaTooNew);
  EXPECT_NE(opened.error().message.find("99"), std::string::npos);
  EXPECT_NE(opened.error().message.find(std::to_string(postgres::kSchemaVersion)), std::string::npos);
}

TEST_F(PostgresStoreTest, OpeningTwiceMigratesOnce) {
  { ASSERT_TRUE(postgres::PostgresStore::open(url_).ok()); }
  auto again = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(again.ok()) << again.error().message;
  pqxx::connection raw(url_);
  pqxx::read_transaction tx(raw);
  EXPECT_EQ(tx.exec1("SELECT COUNT(*) FROM schema_version")[0].as<int>(), postgres::kSchemaVersion);
}

// Replicas claim outbox rows: a row is handed to one live replica only, a dead
// replica's rows go to another, and a replica takes back its own when asked again.
// Pings queued together go in as one statement; a ping the database refuses (a body that
// is not UTF-8) fails alone, and the others of its batch are stored.
TEST_F(PostgresStoreTest, PingsQueuedTogetherAreStoredTogetherAndABadOneFailsAlone) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  constexpr int kPings = 300;
  constexpr int kBad = 150;
  std::mutex mu;
  std::condition_variable all_done;
  int done = 0;
  std::vector<std::string> failures;
  for (int i = 0; i < kPings; ++i) {
    PingRecord r;
    r.monitor = "ckpt";
    r.ping.at = from_unix_ms(kT0 + i);
    r.ping.kind = PingKind::kExitCode;
    r.ping.exit_code = i % 256;
    r.ping.body = i == kBad ? std::string("loss \xff\xfe") : "step " + std::to_string(i);
    r.run_ms = i;
    ASSERT_TRUE(store.write(RecordPing{r}, [&](const Status& status) {
      std::lock_guard lock(mu);
      if (!status) failures.push_back(status.error().code);
      ++done;
      all_done.notify_all();
    }));
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(all_done.wait_for(lock, std::chrono::seconds(30), [&] { return done == kPings; }));
  }
  EXPECT_EQ(failures, std::vector<std::string>{store_error::kWrite});
  EXPECT_FALSE(store.write_health().refusing) << "one bad value is no store failure";
  auto stored = store.pings(PingQuery{"ckpt", std::nullopt, 1'000});
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  ASSERT_EQ(stored->size(), static_cast<size_t>(kPings - 1));
  const PingRecord& newest = stored->front();
  EXPECT_EQ(newest.ping.at, from_unix_ms(kT0 + kPings - 1));
  EXPECT_EQ(newest.ping.kind, PingKind::kExitCode);
  EXPECT_EQ(newest.ping.exit_code, (kPings - 1) % 256);
  EXPECT_EQ(newest.ping.body, "step " + std::to_string(kPings - 1));
  EXPECT_EQ(newest.run_ms, std::optional<int64_t>(kPings - 1));
}

// Results queued together (the common case: many monitors checked at once) go in as a few
// multi-row statements; history, rollups and the newest state of each monitor are as if
// written one by one, a paused monitor stays paused, and a result the database refuses
// (a cause that is not UTF-8) fails alone.
TEST_F(PostgresStoreTest, ResultsQueuedTogetherAreStoredAsOneByOneAndABadOneFailsAlone) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  MonitorState paused = up_state(kT0);
  paused.status = MonitorStatus::kPaused;
  ASSERT_TRUE(write_and_wait(store, SaveState{"held", paused}).ok());

  constexpr int kEach = 100;
  const std::vector<std::string> monitors = {"api", "db", "held"};
  std::mutex mu;
  std::condition_variable all_done;
  int done = 0;
  std::vector<std::string> failures;
  for (int i = 0; i < kEach; ++i) {
    for (const auto& monitor : monitors) {
      RecordResult r;
      r.monitor = monitor;
      r.result.at = from_unix_ms(kT0 + i * 1'000);
      r.result.ok = i % 4 != 0;
      r.result.latency_ms = 2.5;
      r.result.cause = monitor == "db" && i == 50 ? std::string("body \xff") : (r.result.ok ? "" : "timeout");
      r.state = up_state(kT0);
      // Every fourth check fails and leaves the monitor DOWN: uptime is time not DOWN.
      if (!r.result.ok) r.state.status = MonitorStatus::kDown;
      r.state.last_check = r.result.at;
      r.state.consecutive_failures = i;
      ASSERT_TRUE(store.write(r, [&](const Status& status) {
        std::lock_guard lock(mu);
        if (!status) failures.push_back(status.error().code);
        ++done;
        all_done.notify_all();
      }));
    }
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(all_done.wait_for(lock, std::chrono::seconds(30), [&] { return done == kEach * 3; }));
  }
  EXPECT_EQ(failures, std::vector<std::string>{store_error::kWrite});

  auto api = store.results(ResultQuery{"api", std::nullopt, 1'000});
  ASSERT_TRUE(api.ok()) << api.error().message;
  EXPECT_EQ(api->size(), static_cast<size_t>(kEach));
  EXPECT_EQ(api->front().at, from_unix_ms(kT0 + (kEach - 1) * 1'000));
  EXPECT_DOUBLE_EQ(api->front().latency_ms, 2.5);
  auto db = store.results(ResultQuery{"db", std::nullopt, 1'000});
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->size(), static_cast<size_t>(kEach - 1));

  auto buckets = store.uptime(UptimeQuery{"api", RollupResolution::kDay, 0, kT0 + 86'400'000LL * 2});
  ASSERT_TRUE(buckets.ok()) << buckets.error().message;
  int64_t checks = 0;
  int64_t ok = 0;
  double latency = 0;
  for (const auto& b : *buckets) {
    checks += b.checks;
    ok += b.ok;
    latency += b.latency_sum_ms;
  }
  EXPECT_EQ(checks, kEach);
  EXPECT_EQ(ok, kEach - kEach / 4);
  EXPECT_DOUBLE_EQ(latency, 2.5 * kEach);

  auto states = store.load_states();
  ASSERT_TRUE(states.ok());
  for (const auto& s : *states) {
    if (s.monitor == "api") {
      EXPECT_EQ(s.state.consecutive_failures, kEach - 1) << "the newest state";
    }
    if (s.monitor == "held") {
      EXPECT_EQ(s.state.status, MonitorStatus::kPaused) << "a result never ends a pause";
    }
  }
}

// A ping stored by a replica that does not own its monitor, and that the owner must act on,
// reaches every replica's registry as a nudge once it commits; other pings do not.
TEST_F(PostgresStoreTest, APingForTheOwnerNudgesTheRegistriesOnCommit) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  postgres::PgMemberRegistry registry(url_);
  ASSERT_TRUE(registry.beat(MemberRow{"owner", "host:1", "", {}, {}}).ok());  // connects and listens
  auto none = registry.await_nudges(Millis(50));
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none->empty());

  PingRecord quiet;
  quiet.monitor = "hourly";
  quiet.ping.at = from_unix_ms(kT0);
  PingRecord failed = quiet;
  failed.monitor = "nightly-backup";
  failed.ping.kind = PingKind::kFail;
  ASSERT_TRUE(write_and_wait(**opened, RecordPing{quiet, false}).ok());
  ASSERT_TRUE(write_and_wait(**opened, RecordPing{failed, true}).ok());
  std::vector<std::string> nudged;
  for (int i = 0; i < 20 && nudged.empty(); ++i) {
    auto got = registry.await_nudges(Millis(100));
    ASSERT_TRUE(got.ok()) << got.error().message;
    nudged = *got;
  }
  EXPECT_EQ(nudged, std::vector<std::string>{"nightly-backup"});
}

// Two replicas that both believe they own a monitor (a moment of a handover) both see
// it fail: the first to commit opens the incident and queues its alert; the second's
// change is refused whole, so there is one incident and one alert.
TEST_F(PostgresStoreTest, OfTwoChangesFromTheSameStateOnlyTheFirstCommits) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  ASSERT_TRUE(write_and_wait(store, SaveState{"api", up_state(kT0)}).ok());

  auto down_with = [](int64_t incident) {
    RecordResult r;
    r.monitor = "api";
    r.result.at = from_unix_ms(kT0 + 1'000);
    r.result.cause = "connection refused";
    r.state.status = MonitorStatus::kDown;
    r.state.since = r.result.at;
    r.state.open_incident_id = incident;
    r.opened = Incident{incident, "api", r.result.at, std::nullopt, "connection refused", ""};
    NewDelivery alert;
    alert.channel = "pager";
    alert.monitor = "api";
    alert.incident_id = incident;
    alert.kind = "down";
    alert.event = "{}";
    alert.created = r.result.at;
    alert.due = r.result.at;
    r.outbox = {alert};
    r.expect = ExpectedState{std::nullopt};
    return r;
  };
  ASSERT_TRUE(write_and_wait(store, down_with(1)).ok());
  Status second = write_and_wait(store, down_with(2));
  ASSERT_FALSE(second.ok()) << "a second incident opened over the first";
  EXPECT_EQ(second.error().code, store_error::kConflict);
  EXPECT_FALSE(store.write_health().refusing);

  auto incidents = store.incidents(IncidentQuery{});
  ASSERT_TRUE(incidents.ok()) << incidents.error().message;
  ASSERT_EQ(incidents->size(), 1u);
  EXPECT_EQ(incidents->front().id, 1);
  auto alerts =
      store.deliveries(DeliveryQuery{"pager", std::nullopt, std::nullopt, std::nullopt, std::nullopt, 10});
  ASSERT_TRUE(alerts.ok()) << alerts.error().message;
  ASSERT_EQ(alerts->size(), 1u);
  EXPECT_EQ(alerts->front().spec.incident_id, 1);

  // The owner that holds incident 1 closes it.
  RecordResult up;
  up.monitor = "api";
  up.result.at = from_unix_ms(kT0 + 2'000);
  up.result.ok = true;
  up.state = up_state(kT0 + 2'000);
  up.closed = CloseIncident{1, up.result.at};
  up.expect = ExpectedState{1};
  ASSERT_TRUE(write_and_wait(store, up).ok());
  auto states = store.load_states();
  ASSERT_TRUE(states.ok());
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ(states->front().state.status, MonitorStatus::kUp);
}

// Replica a owned api under epoch 1 and decided a DOWN; b claimed api meanwhile (a was
// paused, or cut off). a's write, plain or a change with its incident and alert, is
// refused whole in its own transaction; b's, under epoch 2, commits.
TEST_F(PostgresStoreTest, AWriteDecidedUnderAnOlderEpochIsRefusedWholeAndStoresNothing) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  auto claimed = store.claim_monitors("a", {"api", "db"});
  ASSERT_TRUE(claimed.ok()) << claimed.error().message;
  EXPECT_EQ(claimed->at("api"), 1);
  ASSERT_TRUE(
      write_and_wait(
          store,
          RecordResult{
              "api", result_at(kT0), up_state(kT0), {}, std::nullopt, std::nullopt, std::nullopt, int64_t{1}})
          .ok());

  auto taken = store.claim_monitors("b", {"api"});
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(taken->at("api"), 2) << "the epoch grows whenever ownership moves";

  RecordResult down;
  down.monitor = "api";
  down.result = result_at(kT0 + 1'000, false);
  down.state.status = MonitorStatus::kDown;
  down.state.since = down.result.at;
  down.state.open_incident_id = 7;
  down.opened = Incident{7, "api", down.result.at, std::nullopt, "refused", ""};
  down.outbox = {NewDelivery{"pager", "api", 7, "down", "{}", down.result.at, down.result.at}};
  down.expect = ExpectedState{std::nullopt};
  down.epoch = 1;
  Status refused = write_and_wait(store, down);
  ASSERT_FALSE(refused.ok()) << "a change decided under a claim that moved";
  EXPECT_EQ(refused.error().code, store_error::kFenced);
  EXPECT_FALSE(store.write_health().refusing) << "a fenced write is no failure of the store";

  // Plain results go in runs of one statement: each is fenced on its own.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<Status>> outcomes(3);
  auto plain = [](const std::string& monitor, int64_t at, int64_t epoch) {
    return RecordResult{monitor,      result_at(at), up_state(kT0), {},
                        std::nullopt, std::nullopt,  std::nullopt,  epoch};
  };
  const std::vector<RecordResult> run = {plain("api", kT0 + 2'000, 1), plain("api", kT0 + 3'000, 2),
                                         plain("db", kT0 + 2'000, 1)};
  for (size_t i = 0; i < run.size(); ++i) {
    ASSERT_TRUE(store.write(run[i], [&, i](const Status& s) {
      std::lock_guard lock(mu);
      outcomes[i] = s;
      cv.notify_all();
    }));
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] {
      return std::all_of(outcomes.begin(), outcomes.end(), [](const auto& o) { return o.has_value(); });
    }));
  }
  ASSERT_FALSE(outcomes[0]->ok());
  EXPECT_EQ(outcomes[0]->error().code, store_error::kFenced);
  EXPECT_TRUE(outcomes[1]->ok()) << outcomes[1]->error().message;
  EXPECT_TRUE(outcomes[2]->ok()) << "db is still a's";

  auto incidents = store.incidents(IncidentQuery{});
  ASSERT_TRUE(incidents.ok());
  EXPECT_TRUE(incidents->empty()) << "the fenced change opened an incident";
  auto alerts =
      store.deliveries(DeliveryQuery{"pager", std::nullopt, std::nullopt, std::nullopt, std::nullopt, 10});
  ASSERT_TRUE(alerts.ok());
  EXPECT_TRUE(alerts->empty()) << "the fenced change queued an alert";
  auto history = store.results(ResultQuery{"api", std::nullopt, 50});
  ASSERT_TRUE(history.ok());
  std::vector<int64_t> at;
  for (const auto& r : *history) at.push_back(to_unix_ms(r.at));
  std::sort(at.begin(), at.end());
  EXPECT_EQ(at, (std::vector<int64_t>{kT0, kT0 + 3'000}))
      << "only the results of the claims they were made under";
}

TEST_F(PostgresStoreTest, OutboxRowsAreClaimedByOneLiveReplicaAndADeadOnesAreTakenOver) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  two_live_replicas();
  MonitorState down;
  down.status = MonitorStatus::kDown;
  std::vector<NewDelivery> outbox;
  for (int i = 0; i < 3; ++i) {  // three incidents: one incident's rows wait for each other (below)
    outbox.push_back(NewDelivery{"hook", "api", i + 1, "down", "{}", from_unix_ms(kT0), from_unix_ms(kT0)});
  }
  ASSERT_TRUE(write_and_wait(store, RecordResult{"api", result_at(kT0, false), down, outbox}).ok());
  const Millis ttl(6'000);
  auto claim = [&](const std::string& who, bool again = false, int limit = 50) {
    auto rows = store.claim_deliveries(DeliveryClaim{"hook", who, 0, again, limit, ttl});
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    std::vector<int64_t> ids;
    for (const auto& r : *rows) ids.push_back(r.id);
    return ids;
  };
  const std::vector<int64_t> first_two = claim("a", false, 2);
  ASSERT_EQ(first_two.size(), 2u);
  EXPECT_LT(first_two[0], first_two[1]);  // oldest first
  const std::vector<int64_t> last = claim("b");
  ASSERT_EQ(last.size(), 1u);  // only what a did not take
  EXPECT_GT(last[0], first_two[1]);
  EXPECT_TRUE(claim("b").empty());
  EXPECT_TRUE(claim("a").empty());                   // a holds its rows already
  EXPECT_EQ(claim("a", /*again=*/true), first_two);  // unless it asks for them again

  // a stops beating: once its last beat is older than the ttl, b takes its rows.
  silence("a");
  EXPECT_EQ(claim("b"), first_two);
  EXPECT_TRUE(claim("a").empty());
  // A row that is no longer pending is nobody's to take.
  ASSERT_TRUE(
      write_and_wait(store, UpdateDelivery{last[0], DeliveryStatus::kDelivered, 1, from_unix_ms(kT0),
                                           from_unix_ms(kT0), std::nullopt, "", 200, from_unix_ms(kT0)})
          .ok());
  EXPECT_EQ(claim("b", true), first_two);
}

// The DOWN of incident 1 is claimed by replica a, which dies; b, the monitor's new owner,
// writes its recovery. The recovery waits until b holds the DOWN, so the channel hears the
// DOWN first.
TEST_F(PostgresStoreTest, ARecoveryIsNotClaimedWhileItsDownIsHeldByAnotherReplica) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  two_live_replicas();
  const Millis ttl(6'000);
  auto claim = [&](const std::string& who) {
    auto rows = store.claim_deliveries(DeliveryClaim{"hook", who, 0, false, 50, ttl});
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    std::vector<std::string> events;
    for (const auto& r : *rows) events.push_back(r.spec.kind + "#" + std::to_string(*r.spec.incident_id));
    return events;
  };
  MonitorState down;
  down.status = MonitorStatus::kDown;
  ASSERT_TRUE(write_and_wait(store, RecordResult{"api",
                                                 result_at(kT0, false),
                                                 down,
                                                 {NewDelivery{"hook", "api", 1, "down", "{}",
                                                              from_unix_ms(kT0), from_unix_ms(kT0)}}})
                  .ok());
  EXPECT_EQ(claim("a"), std::vector<std::string>{"down#1"});

  // Another incident's row, and a row of no incident, are not held up.
  MonitorState up;
  up.status = MonitorStatus::kUp;
  ASSERT_TRUE(
      write_and_wait(
          store,
          RecordResult{"api",
                       result_at(kT0 + 1'000, true),
                       up,
                       {NewDelivery{"hook", "api", 1, "up", "{}", from_unix_ms(kT0), from_unix_ms(kT0)},
                        NewDelivery{"hook", "other", 2, "down", "{}", from_unix_ms(kT0), from_unix_ms(kT0)}}})
          .ok());
  EXPECT_EQ(claim("b"), std::vector<std::string>{"down#2"}) << "up#1 waits behind a's down#1";
  EXPECT_TRUE(claim("b").empty());

  silence("a");
  EXPECT_EQ(claim("b"), std::vector<std::string>{"down#1"}) << "a died: b takes its down first";
  EXPECT_EQ(claim("b"), std::vector<std::string>{"up#1"}) << "then the recovery, queued behind it";
}

// Two replicas opening incidents at once never number two alike.
TEST_F(PostgresStoreTest, IncidentIdBlocksReservedByTwoReplicasNeverOverlap) {
  auto a = postgres::PostgresStore::open(url_);
  auto b = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(
      write_and_wait(**a, OpenIncident{Incident{7, "api", from_unix_ms(kT0), std::nullopt, "down", ""}})
          .ok());
  std::vector<int64_t> firsts;
  std::vector<std::thread> threads;
  std::mutex mu;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto first = (i % 2 == 0 ? **a : **b).reserve_incident_ids(10);
      ASSERT_TRUE(first.ok()) << first.error().message;
      std::lock_guard lock(mu);
      firsts.push_back(*first);
    });
  }
  for (auto& t : threads) t.join();
  std::sort(firsts.begin(), firsts.end());
  ASSERT_EQ(firsts.size(), 8u);
  EXPECT_EQ(firsts.front(), 8) << "past the stored incident 7";
  for (size_t i = 1; i < firsts.size(); ++i) EXPECT_GE(firsts[i], firsts[i - 1] + 10) << "blocks overlap";
}

// A replica's beat reads the states changed since its last read, not every monitor's.
TEST_F(PostgresStoreTest, ABeatReadsOnlyTheStatesChangedSinceTheLastRead) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  auto names = [](const StateFeed& feed) {
    std::vector<std::string> out;
    for (const auto& s : feed.states) out.push_back(s.monitor);
    return out;
  };
  ASSERT_TRUE(write_and_wait(store, SaveState{"api", up_state(kT0)}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveState{"db", up_state(kT0)}).ok());
  auto all = store.states_after(0);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(names(*all), (std::vector<std::string>{"api", "db"}));
  auto none = store.states_after(all->next);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->states.empty());
  RecordResult down{"db", result_at(kT0 + 1000, false), up_state(kT0)};
  down.state.status = MonitorStatus::kDown;
  ASSERT_TRUE(write_and_wait(store, down).ok());
  auto changed = store.states_after(none->next);
  ASSERT_TRUE(changed.ok());
  ASSERT_EQ(names(*changed), std::vector<std::string>{"db"});
  EXPECT_EQ(changed->states.front().state.status, MonitorStatus::kDown);
  auto one = store.state_of("db");
  ASSERT_TRUE(one.ok() && *one);
  EXPECT_EQ((*one)->status, MonitorStatus::kDown);
  EXPECT_FALSE(*store.state_of("nope"));
}

// Two replicas save reports at once; the one whose transaction began first commits last.
// A reader that read past the second must still get the first once it commits.
TEST_F(PostgresStoreTest, AReportCommittedAfterALaterOneIsStillRead) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  auto names = [](const NodeReportFeed& feed) {
    std::vector<std::string> out;
    for (const auto& r : feed.reports) out.push_back(r.node);
    return out;
  };
  int64_t cursor = 0;
  pqxx::connection slow(url_);
  pqxx::work early(slow);  // the other replica's batch, begun first
  early.exec(
      "INSERT INTO node_reports (job, node, received_ms, writer, body) VALUES ('llama', 'node-a', 1, "
      "'other', '{}')");
  ASSERT_TRUE(write_and_wait(store, SaveNodeReport{"llama", "node-b", "{}", from_unix_ms(kT0), "self"}).ok());
  auto first = store.node_reports_after(cursor);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(names(*first).empty()) << "node-b waits until every transaction begun before it has ended";
  cursor = first->next;
  early.commit();
  auto second = store.node_reports_after(cursor);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(names(*second), (std::vector<std::string>{"node-a", "node-b"}));
  auto third = store.node_reports_after(second->next);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(names(*third).empty());
}

// A fenced write that waits on a table someone locked holds no row another replica needs:
// a claim of its monitor goes through at once, and the write, once the lock is gone, is
// refused by the epoch the claim moved. (Before, the write took its fence rows first and
// the claim waited as long as the lock: the monitor was checked by neither replica.)
TEST_F(PostgresStoreTest, AFencedWriteWaitingOnALockedTableDoesNotHoldUpAClaim) {
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  ASSERT_TRUE(store.claim_monitors("a", {"api"}).ok());

  pqxx::connection locker(url_);
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE monitor_state IN ACCESS EXCLUSIVE MODE");
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> written;
  ASSERT_TRUE(store.write(RecordResult{"api",
                                       result_at(kT0, false),
                                       up_state(kT0),
                                       {},
                                       std::nullopt,
                                       std::nullopt,
                                       std::nullopt,
                                       int64_t{1}},
                          [&](const Status& s) {
                            std::lock_guard guard(mu);
                            written = s;
                            cv.notify_all();
                          }));
  pqxx::connection watcher(url_);
  auto write_waits = [&] {
    pqxx::nontransaction q(watcher);
    return q.exec1("SELECT count(*) FROM pg_locks WHERE NOT granted")[0].as<int>() > 0;
  };
  for (int i = 0; i < 500 && !write_waits(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(write_waits()) << "the write never reached the lock";

  auto taken = store.claim_monitors("b", {"api"});
  ASSERT_TRUE(taken.ok()) << "the claim waited on the write: " << taken.error().message;
  EXPECT_EQ(taken->at("api"), 2);
  {
    std::lock_guard guard(mu);
    EXPECT_FALSE(written.has_value()) << "the write still waits on the lock";
  }
  lock.abort();
  std::unique_lock guard(mu);
  ASSERT_TRUE(cv.wait_for(guard, std::chrono::seconds(10), [&] { return written.has_value(); }));
  ASSERT_FALSE(written->ok()) << "decided under epoch 1, after the claim of epoch 2";
  EXPECT_EQ(written->error().code, store_error::kFenced);
}

// A beat reads the database's clock, give or take half the round trip that read it.
TEST_F(PostgresStoreTest, ABeatReadsTheDatabasesClock) {
  auto opened = postgres::PostgresStore::open(url_);  // the schema
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  postgres::PgMemberRegistry registry(url_);
  const auto before = std::chrono::system_clock::now();
  auto beaten = registry.beat(MemberRow{"one", "host:1", "c", {}, {}});
  const auto after = std::chrono::system_clock::now();
  ASSERT_TRUE(beaten.ok()) << beaten.error().message;
  ASSERT_EQ(beaten->members.size(), 1u);
  EXPECT_EQ(beaten->members.front().id, "one");
  // The database runs on this host's clock here.
  EXPECT_GE(beaten->database_now, before - beaten->uncertainty - std::chrono::milliseconds(1));
  EXPECT_LE(beaten->database_now, after + beaten->uncertainty + std::chrono::milliseconds(1));
  EXPECT_LT(beaten->uncertainty, std::chrono::seconds(1));
}

}  // namespace
}  // namespace trainwatch::testing
