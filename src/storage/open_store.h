// open_store: the one place that chooses the Store from the config (`store.url`).
//
//   empty url           -> SqliteStore at <data_dir>/trainwatch.db (the directory is
//                          created owner-only if missing)
//   postgresql://...    -> postgres::PostgresStore (postgres:// too), and its members table
//
// Errors carry a message that names the store without its password, ready for one log
// line: the codes of SqliteStore::open and postgres::PostgresStore::open, store_error::kDataDir, and
// store_error::kUrl for a scheme that names no store.
#pragma once

#include <memory>
#include <string>

#include "core/database_session.h"
#include "core/result.h"
#include "storage/member_registry.h"
#include "storage/store.h"
#include "storage/store_errors.h"

namespace trainwatch {

struct OpenedStore {
  std::unique_ptr<Store> store;
  // Stores that several `trainwatch serve` processes can share (PostgreSQL) have a members
  // table (storage/member_registry.h); null for SQLite, which one process owns.
  std::unique_ptr<MemberRegistry> members;
  std::string description;  // for the log: the file, or the URL without its secrets
};

// `limits` bound the sessions of a shared database (PostgreSQL; SQLite has none).
Result<OpenedStore> open_store(const std::string& url, const std::string& data_dir,
                               const DatabaseSessionLimits& limits = {});

}  // namespace trainwatch
