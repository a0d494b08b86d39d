// The stores the conformance suite runs against: each factory owns one empty place for a
// store (a temp dir, a database of its own) and opens a store on it, again and again, so
// tests can close a store and open what it left.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "reporter/temp_dir.h"
#include "storage/pg_server.h"
#include "storage/postgres/postgres_store.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::testing {

struct SqliteFactory {
  static constexpr const char* kName = "Sqlite";
  TempDir dir;

  std::unique_ptr<Store> open() {
    auto store = sqlite::SqliteStore::open(dir.path() + "/trainwatch.db");
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::unique_ptr<Store>(std::move(store).value()) : nullptr;
  }
};

struct PostgresFactory {
  static constexpr const char* kName = "Postgres";
  Result<std::string> url = PgServer::instance().create_database();

  std::unique_ptr<Store> open() {
    EXPECT_TRUE(url.ok()) << url.error().message;
    if (!url.ok()) return nullptr;
    auto store = postgres::PostgresStore::open(*url);
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::unique_ptr<Store>(std::move(store).value()) : nullptr;
  }
};

struct FactoryName {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace trainwatch::testing
