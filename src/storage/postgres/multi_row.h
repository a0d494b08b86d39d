// Multi-row statements: many rows in one INSERT, so a batch of small writes costs a round
// trip per table instead of one (or three, with its savepoint) per row. Parameters go as
// text, each cast to its column's type in the statement.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/postgres/write_ops.h"

namespace trainwatch::postgres {

using Param = std::optional<std::string>;  // nullopt: NULL
using ParamRow = std::vector<Param>;

// Runs `head` ("INSERT INTO t (a, b)") + " VALUES ($1::int, $2), ..." + `tail` ("ON
// CONFLICT ..." or "") over `rows`, in as few statements as PostgreSQL's bound of 65,535
// parameters allows. `casts` holds each column's cast ("::bigint", or "" for text); every
// row has one parameter per column.
void insert_rows(Tx& tx, const std::string& head, const std::vector<std::string>& casts,
                 const std::vector<ParamRow>& rows, const std::string& tail = "");

// Numbers as parameters; a real in the shortest text that reads back the same.
inline Param integer(int64_t n) { return std::to_string(n); }
inline Param integer(const std::optional<int64_t>& n) { return n ? integer(*n) : std::nullopt; }
Param real(double n);
inline Param boolean(bool b) { return b ? "true" : "false"; }

}  // namespace trainwatch::postgres
