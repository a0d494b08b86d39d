#include "storage/postgres/multi_row.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainwatch::postgres {

Param real(double n) { return fmt::format("{}", n); }

void insert_rows(Tx& tx, const std::string& head, const std::vector<std::string>& casts,
                 const std::vector<ParamRow>& rows, const std::string& tail) {
  constexpr size_t kMaxParams = 65'535;
  const size_t columns = casts.size();
  const size_t rows_per_statement = std::max<size_t>(1, std::min<size_t>(1'000, kMaxParams / columns));
  for (size_t first = 0; first < rows.size(); first += rows_per_statement) {
    const size_t last = std::min(rows.size(), first + rows_per_statement);
    std::string sql = head + " VALUES ";
    std::vector<Param> params;
    params.reserve((last - first) * columns);
    for (size_t i = first; i < last; ++i) {
      sql += i == first ? "(" : ", (";
      for (size_t c = 0; c < columns; ++c) {
        sql += fmt::format("{}${}{}", c == 0 ? "" : ", ", params.size() + 1, casts[c]);
        params.push_back(rows[i][c]);
      }
      sql += ")";
    }
    if (!tail.empty()) sql += " " + tail;
    tx.exec_params(sql, pqxx::prepare::make_dynamic_params(params));
  }
}

}  // namespace trainwatch::postgres
