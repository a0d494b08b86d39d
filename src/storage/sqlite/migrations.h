// Versioned schema for the SQLite store.
//
// Each migration moves the schema from version N-1 to N. The versions applied so far are
// rows of `schema_migrations`; `migrate_sqlite` applies the missing ones in order inside one
// IMMEDIATE transaction, so a crash or a second process opening the same file at the same
// time leaves either the old schema or the new one, never half of it.
//
// Rules for adding one: append, never edit a released migration; keep the SQL portable
// (PostgreSQL implements the same Store): times are INTEGER ms since the Unix epoch,
// strings TEXT, booleans INTEGER 0/1, no SQLite-only types.
#pragma once

#include <span>
#include <string_view>

#include "core/result.h"
#include "storage/store_errors.h"

namespace SQLite {
class Database;
}

namespace trainwatch::sqlite {

struct SqliteMigration {
  int version;
  std::string_view description;
  std::string_view sql;  // one or more statements
};

// Every migration, oldest first; the last one's version is kSqliteSchemaVersion.
std::span<const SqliteMigration> sqlite_migrations();

inline constexpr int kSqliteSchemaVersion = 16;

// The highest applied version; 0 for an empty database. Errors: store_error::kRead.
Result<int> sqlite_schema_version(SQLite::Database& db);

// Brings `db` to `target` (tests ask for older versions to build old databases).
// Errors: store_error::kSchemaTooNew when the file was written by a newer trainwatch,
// store_error::kMigrate when a statement fails (nothing is applied then).
Status migrate_sqlite(SQLite::Database& db, int target = kSqliteSchemaVersion);

}  // namespace trainwatch::sqlite
