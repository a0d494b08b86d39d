// Versioned schema for the PostgreSQL store.
//
// Each migration moves the schema from version N-1 to N; applied versions are rows of
// `schema_version`. migrate_postgres applies the missing ones in order in one transaction
// that first takes a transaction-scoped advisory lock, so several trainwatch processes
// starting on one database at once migrate it once, and a crash leaves the old schema or
// the new one, never half of each.
//
// The tables mirror SQLite's (storage/sqlite/migrations.h) with PostgreSQL types: times
// are BIGINT ms since the Unix epoch, booleans BOOLEAN. Rows that more than one process
// may update later (monitor state, deliveries, API monitors and windows) carry a
// `version` that every update increments, so an update can become a compare-and-set.
//
// Rules for adding one: append, never edit a released migration.
#pragma once

#include <span>
#include <string_view>

#include "core/result.h"
#include "storage/store_errors.h"

namespace pqxx {
class connection_base;
}

namespace trainwatch::postgres {

struct Migration {
  int version;
  std::string_view description;
  std::string_view sql;  // one or more statements
};

// Every migration, oldest first; the last one's version is kSchemaVersion.
std::span<const Migration> migrations();

inline constexpr int kSchemaVersion = 15;

// The highest applied version; 0 for an empty database. Errors: store_error::kRead.
Result<int> schema_version(pqxx::connection_base& conn);

// Brings the database to `target`. Errors: store_error::kSchemaTooNew (naming both versions)
// when a newer trainwatch wrote it, store_error::kMigrate when a statement fails (nothing is
// applied then), store_error::kUnavailable when the connection is lost.
Status migrate(pqxx::connection_base& conn, int target = kSchemaVersion);

}  // namespace trainwatch::postgres
