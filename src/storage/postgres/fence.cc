// Fencing by epoch: see fence.h.
#include "storage/postgres/fence.h"
#include "storage/store_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace trainwatch::postgres {
namespace {

// Names per statement: well below PostgreSQL's 65,535 parameters.
constexpr size_t kNamesPerStatement = 1'000;

}  // namespace

Result<std::map<std::string, int64_t>> claim_monitors_in(Tx& tx, const std::string& owner,
                                                         const std::vector<std::string>& monitors) {
  std::map<std::string, int64_t> epochs;
  for (size_t first = 0; first < monitors.size(); first += kNamesPerStatement) {
    const size_t last = std::min(monitors.size(), first + kNamesPerStatement);
    std::string sql = "INSERT INTO monitor_owners AS o (monitor, owner, epoch) VALUES ";
    std::vector<std::optional<std::string>> params{owner};
    for (size_t i = first; i < last; ++i) {
      sql += fmt::format("{}(${}, $1, 1)", i == first ? "" : ", ", params.size() + 1);
      params.emplace_back(monitors[i]);
    }
    // Even a claim by the owner it names grows the epoch: a replica that re-joins (after
    // a pause, a cut, an outage) must not commit what it decided before it left.
    sql +=
        " ON CONFLICT (monitor) DO UPDATE SET owner = excluded.owner, epoch = o.epoch + 1 "
        "RETURNING monitor, epoch";
    for (const pqxx::row& row : tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params))) {
      epochs[row[0].as<std::string>()] = row[1].as<int64_t>();
    }
  }
  return epochs;
}

Status check_fence(Tx& tx, const std::string& monitor, int64_t epoch) {
  const pqxx::result row = tx.exec_prepared("lock_owner", monitor);
  const std::optional<int64_t> stored =
      row.empty() ? std::nullopt : std::optional<int64_t>(row[0][0].as<int64_t>());
  if (stored == epoch) return Ok{};
  return make_error(store_error::kFenced,
                    fmt::format("fenced: decided under epoch {}, and the monitor's epoch is {}{}", epoch,
                                stored ? std::to_string(*stored) : "none",
                                row.empty() ? "" : " (owner " + row[0][1].as<std::string>() + ")"));
}

std::vector<bool> check_fences(Tx& tx, const std::vector<const RecordResult*>& results) {
  std::set<std::string> names;
  for (const RecordResult* r : results) {
    if (r->epoch) names.insert(r->monitor);
  }
  std::map<std::string, int64_t> stored;
  std::vector<std::string> all(names.begin(), names.end());
  for (size_t first = 0; first < all.size(); first += kNamesPerStatement) {
    const size_t last = std::min(all.size(), first + kNamesPerStatement);
    std::string sql = "SELECT monitor, epoch FROM monitor_owners WHERE monitor IN (";
    std::vector<std::optional<std::string>> params;
    for (size_t i = first; i < last; ++i) {
      sql += fmt::format("{}${}", i == first ? "" : ", ", params.size() + 1);
      params.emplace_back(all[i]);
    }
    // FOR SHARE: as check_fence, the rows stay as read until the commit.
    sql += ") FOR SHARE";
    for (const pqxx::row& row : tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params))) {
      stored[row[0].as<std::string>()] = row[1].as<int64_t>();
    }
  }
  std::vector<bool> admitted;
  admitted.reserve(results.size());
  for (const RecordResult* r : results) {
    if (!r->epoch) {
      admitted.push_back(true);
      continue;
    }
    auto it = stored.find(r->monitor);
    admitted.push_back(it != stored.end() && it->second == *r->epoch);
  }
  return admitted;
}

}  // namespace trainwatch::postgres
