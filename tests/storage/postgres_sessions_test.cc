// The bounds every PostgreSQL session of trainwatch's carries (storage/postgres/
// connection.h, core/database_session.h): what each role gets, and what they are for: a
// replica stalled inside a transaction (stopped, or its packets dropped) loses that
// transaction, and the owner rows it locked, within the idle bound, so that another
// replica's claim of its monitors goes through instead of waiting behind a dead holder.
#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include <string>

#include "storage/conformance.h"
#include "storage/postgres/connection.h"

namespace trainwatch::testing {
namespace {

class PostgresSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto url = PgServer::instance().create_database();
    ASSERT_TRUE(url.ok()) << url.error().message;
    url_ = *url;
  }
  static std::string show(pqxx::connection& conn, const std::string& setting) {
    pqxx::nontransaction tx(conn);
    return tx.exec1("SHOW " + setting)[0].as<std::string>();
  }
  std::string url_;
};

TEST_F(PostgresSessionsTest, EverySessionIsBoundedAndOnlyTheWriterWaitsOnLocks) {
  const DatabaseSessionLimits limits;  // the defaults
  auto reader = postgres::connect(url_, postgres::SessionRole::kReader, limits);
  auto writer = postgres::connect(url_, postgres::SessionRole::kWriter, limits);
  auto members = postgres::connect(url_, postgres::SessionRole::kMembers, limits);
  ASSERT_TRUE(reader.ok() && writer.ok() && members.ok());
  for (auto* conn : {reader->get(), writer->get(), members->get()}) {
    EXPECT_EQ(show(*conn, "idle_in_transaction_session_timeout"), "2s");
    EXPECT_EQ(show(*conn, "tcp_keepalives_idle"), "2");
    EXPECT_EQ(show(*conn, "tcp_keepalives_count"), "2");
    EXPECT_EQ(show(*conn, "tcp_user_timeout"), "4000");  // milliseconds, as PostgreSQL shows it
  }
  for (auto* conn : {reader->get(), members->get()}) {
    EXPECT_EQ(show(*conn, "lock_timeout"), "500ms");
    EXPECT_EQ(show(*conn, "statement_timeout"), "4s");
  }
  EXPECT_EQ(show(**writer, "lock_timeout"), "0") << "the writer takes its tables first and may wait";
  EXPECT_EQ(show(**writer, "statement_timeout"), "0");
}

TEST_F(PostgresSessionsTest, TheClientSideGetsKeepalivesAndATcpUserTimeoutUnlessTheUrlSetsThem) {
  DatabaseSessionLimits limits;
  limits.network = Millis(10'000);
  const std::string url = postgres::with_bounds("postgresql://u@h:5432/db?keepalives_idle=30", limits);
  EXPECT_NE(url.find("keepalives_idle=30"), std::string::npos) << url;
  EXPECT_EQ(url.find("keepalives_idle=5"), std::string::npos) << "the URL's own value stays: " << url;
  EXPECT_NE(url.find("keepalives_count=5"), std::string::npos) << url;
  EXPECT_NE(url.find("tcp_user_timeout=10000"), std::string::npos) << url;
}

// A replica's writer locked monitors' owner rows (a fenced write, fence.h) and then went
// silent inside its transaction, as a SIGSTOP or a partition that drops its packets leaves
// it. Another replica's claim of those monitors goes through once the idle bound ended
// that transaction: with PostgreSQL's defaults it would fail at every try for as long as
// the silent replica's TCP connection is believed alive (hours).
TEST_F(PostgresSessionsTest, AClaimGoesThroughOnceAStalledHoldersTransactionIsEndedByTheIdleBound) {
  DatabaseSessionLimits stalled_limits;
  stalled_limits.idle_in_transaction = Millis(300);
  DatabaseSessionLimits claimer_limits;
  claimer_limits.lock_wait = Millis(3'000);  // longer than the idle bound: the claim outwaits the holder
  auto opened = postgres::PostgresStore::open(url_, claimer_limits);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  ASSERT_TRUE(store.claim_monitors("stalled", {"api", "db"}).ok());

  auto stalled = postgres::connect(url_, postgres::SessionRole::kWriter, stalled_limits);
  ASSERT_TRUE(stalled.ok());
  pqxx::work held(**stalled);
  held.exec("SELECT epoch FROM monitor_owners WHERE monitor IN ('api', 'db') FOR SHARE");
  // ... and nothing more from this client: it is stopped.

  auto claimed = store.claim_monitors("taker", {"api", "db"});
  ASSERT_TRUE(claimed.ok()) << claimed.error().message;
  EXPECT_EQ(claimed->at("api"), 2);
  EXPECT_EQ(claimed->at("db"), 2);
  EXPECT_THROW(held.exec("SELECT 1"), pqxx::broken_connection) << "the server ended the stalled session";
}

// With PostgreSQL's own default (no idle bound) the same claim fails at its lock timeout:
// what the bound above is for.
TEST_F(PostgresSessionsTest, WithoutTheIdleBoundTheClaimFailsBehindTheStalledHolder) {
  DatabaseSessionLimits unbounded;
  unbounded.idle_in_transaction = Millis(0);
  auto opened = postgres::PostgresStore::open(url_);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  Store& store = **opened;
  ASSERT_TRUE(store.claim_monitors("stalled", {"api"}).ok());
  auto stalled = postgres::connect(url_, postgres::SessionRole::kWriter, unbounded);
  ASSERT_TRUE(stalled.ok());
  pqxx::work held(**stalled);
  held.exec("SELECT epoch FROM monitor_owners WHERE monitor = 'api' FOR SHARE");

  auto claimed = store.claim_monitors("taker", {"api"});
  ASSERT_FALSE(claimed.ok());
  EXPECT_NE(claimed.error().message.find("lock timeout"), std::string::npos) << claimed.error().message;
}

}  // namespace
}  // namespace trainwatch::testing
