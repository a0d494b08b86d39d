#include "storage/open_store.h"

#include <filesystem>

#include "storage/data_dir.h"
#include "storage/postgres/connection.h"
#include "storage/postgres/member_registry.h"
#include "storage/postgres/postgres_store.h"
#include "storage/sqlite/sqlite_store.h"
#include "storage/store_errors.h"

namespace trainwatch {
namespace {

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

Result<OpenedStore> open_store(const std::string& url, const std::string& data_dir,
                               const DatabaseSessionLimits& limits) {
  if (url.empty()) {
    if (Status prepared = prepare_data_dir(data_dir); !prepared) {
      return make_error(prepared.error().code, "data_dir: " + prepared.error().message);
    }
    const std::string path = (std::filesystem::path(data_dir) / "trainwatch.db").string();
    auto store = sqlite::SqliteStore::open(path);
    if (!store) return make_error(store.error().code, path + ": " + store.error().message);
    return OpenedStore{std::move(*store), nullptr, path};
  }
  const std::string target = postgres::describe_target(url);
  if (!starts_with(url, "postgresql://") && !starts_with(url, "postgres://")) {
    return make_error(store_error::kUrl,
                      "store.url " + target + ": expected a postgresql:// URL, or none for SQLite");
  }
  auto store = postgres::PostgresStore::open(url, limits);
  if (!store) return store.error();  // postgres::PostgresStore's messages name the target already
  return OpenedStore{std::move(*store), std::make_unique<postgres::PgMemberRegistry>(url, limits), target};
}

}  // namespace trainwatch
