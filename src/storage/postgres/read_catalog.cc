// Monitors, maintenance windows and notification channels created through the API: see
// reads.h.
#include "storage/postgres/reads.h"

namespace trainwatch::postgres {

Result<std::vector<ApiMonitorSpec>> read_api_monitors(Tx& tx) {
  std::vector<ApiMonitorSpec> out;
  for (const pqxx::row& row : tx.exec("SELECT name, spec_json FROM api_monitors ORDER BY name")) {
    out.push_back(ApiMonitorSpec{row[0].as<std::string>(), row[1].as<std::string>()});
  }
  return out;
}

Result<std::vector<ApiWindowSpec>> read_api_windows(Tx& tx) {
  std::vector<ApiWindowSpec> out;
  for (const pqxx::row& row : tx.exec("SELECT id, spec_json, created_ms FROM api_maintenance ORDER BY id")) {
    out.push_back(
        ApiWindowSpec{row[0].as<int64_t>(), row[1].as<std::string>(), from_unix_ms(row[2].as<int64_t>())});
  }
  return out;
}

Result<int64_t> read_next_api_window_id(Tx& tx) {
  // The high-water mark covers deleted windows; MAX(id) a table that never had one.
  return tx
      .exec1(
          "SELECT GREATEST(COALESCE((SELECT high FROM id_high_water WHERE name = 'api_maintenance'), 0), "
          "COALESCE((SELECT MAX(id) FROM api_maintenance), 0)) + 1")[0]
      .as<int64_t>();
}

Result<std::vector<ApiChannelSpec>> read_api_channels(Tx& tx) {
  std::vector<ApiChannelSpec> out;
  for (const pqxx::row& row : tx.exec("SELECT name, spec_json FROM api_channels ORDER BY name")) {
    out.push_back(ApiChannelSpec{row[0].as<std::string>(), row[1].as<std::string>()});
  }
  return out;
}

}  // namespace trainwatch::postgres
