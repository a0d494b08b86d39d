#include "storage/sqlite/migrations.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/sqlite/sqlite_store.h"
#include "storage/store_errors.h"

namespace trainwatch::sqlite {
namespace {

namespace fs = std::filesystem;

class SqliteMigrationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-migrate-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "trainwatch.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
};

bool has_index(SQLite::Database& db, const std::string& name) {
  SQLite::Statement q(db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?");
  q.bind(1, name);
  return q.executeStep();
}

TEST_F(SqliteMigrationsTest, VersionsAreContiguousFromOne) {
  int expected = 1;
  for (const SqliteMigration& m : sqlite_migrations()) EXPECT_EQ(m.version, expected++);
  EXPECT_EQ(sqlite_migrations().back().version, kSqliteSchemaVersion);
}

TEST_F(SqliteMigrationsTest, AnEmptyDatabaseIsVersionZeroAndMigratesToTheLatest) {
  SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  EXPECT_EQ(*sqlite_schema_version(db), 0);
  ASSERT_TRUE(migrate_sqlite(db).ok());
  EXPECT_EQ(*sqlite_schema_version(db), kSqliteSchemaVersion);
  // Migrating again is a no-op.
  ASSERT_TRUE(migrate_sqlite(db).ok());
  EXPECT_EQ(*sqlite_schema_version(db), kSqliteSchemaVersion);
}

TEST_F(SqliteMigrationsTest, OpeningAVersionOneDatabaseMigratesItAndKeepsItsData) {
  {
    SQLite::Database v1(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    ASSERT_TRUE(migrate_sqlite(v1, 1).ok());
    ASSERT_EQ(*sqlite_schema_version(v1), 1);
    EXPECT_FALSE(has_index(v1, "check_results_monitor_at"));
    v1.exec(
        "INSERT INTO monitor_state (monitor, status, since_ms, last_check_ms, last_latency_ms, last_error, "
        "consecutive_failures, open_incident_id) VALUES ('api', 'down', 1000, 2000, 3.5, 'refused', 3, 4)");
    v1.exec(
        "INSERT INTO incidents (id, monitor, started_ms, ended_ms, cause) VALUES (4, 'api', 1000, NULL, "
        "'refused')");
    v1.exec(
        "INSERT INTO check_results (monitor, at_ms, ok, latency_ms, cause, http_status) "
        "VALUES ('api', 2000, 0, 3.5, 'refused', 0)");
  }

  auto store = SqliteStore::open(path_);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto states = (*store)->load_states();
  ASSERT_TRUE(states.ok());
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ(states->front().state.status, MonitorStatus::kDown);
  EXPECT_EQ(states->front().state.open_incident_id, 4);
  EXPECT_EQ(*(*store)->next_incident_id(), 5);
  EXPECT_EQ((*store)->results(ResultQuery{"api", std::nullopt, 50})->size(), 1u);

  SQLite::Database check(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(*sqlite_schema_version(check), kSqliteSchemaVersion);
  EXPECT_TRUE(has_index(check, "check_results_monitor_at"));
  EXPECT_TRUE(has_index(check, "incidents_monitor_id"));
}

TEST_F(SqliteMigrationsTest, PingsIndexedByMonitorBecomeChainsThatPageTheSame) {
  {
    SQLite::Database v7(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    ASSERT_TRUE(migrate_sqlite(v7, 7).ok());
    for (int i = 0; i < 5; ++i) {
      SQLite::Statement insert(v7, "INSERT INTO heartbeat_pings (monitor, at_ms, kind) VALUES (?, ?, ?)");
      insert.bind(1, i % 2 == 0 ? "ckpt" : "eval");
      insert.bind(2, 1000 + i);
      insert.bind(3, i == 4 ? "start" : "success");
      insert.exec();
    }
  }
  auto store = SqliteStore::open(path_);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto ckpt = (*store)->pings(PingQuery{"ckpt", std::nullopt, 10});
  ASSERT_TRUE(ckpt.ok());
  ASSERT_EQ(ckpt->size(), 3u);
  EXPECT_EQ(to_unix_ms(ckpt->at(0).ping.at), 1004);
  EXPECT_EQ(to_unix_ms(ckpt->at(2).ping.at), 1000);
  auto marks = (*store)->heartbeat_marks("ckpt");
  ASSERT_TRUE(marks.ok() && marks->last_finish && marks->open_start);
  EXPECT_EQ(to_unix_ms(marks->last_finish->ping.at), 1002);
  EXPECT_EQ((*store)->pings(PingQuery{"eval", std::nullopt, 10})->size(), 2u);

  SQLite::Database check(path_, SQLite::OPEN_READONLY);
  EXPECT_FALSE(has_index(check, "heartbeat_pings_monitor_id")) << "the per-ping random page write is gone";
}

TEST_F(SqliteMigrationsTest, ADatabaseFromANewerTrainwatchIsRefused) {
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    ASSERT_TRUE(migrate_sqlite(db).ok());
    db.exec("INSERT INTO schema_migrations (version, description) VALUES (99, 'from the future')");
  }
  auto store = SqliteStore::open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, store_error::kSchemaTooNew);
}

TEST_F(SqliteMigrationsTest, AFailedMigrationAppliesNothing) {
  SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  ASSERT_TRUE(migrate_sqlite(db, 1).ok());
  // Make migration 2 fail halfway: its second index name is taken.
  db.exec("CREATE TABLE incidents_monitor_id (x INTEGER)");
  auto migrated = migrate_sqlite(db);
  ASSERT_FALSE(migrated.ok());
  EXPECT_EQ(migrated.error().code, store_error::kMigrate);
  EXPECT_EQ(*sqlite_schema_version(db), 1);
  EXPECT_FALSE(has_index(db, "check_results_monitor_at"));
}

}  // namespace
}  // namespace trainwatch::sqlite
