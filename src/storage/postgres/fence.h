// Fencing: the epochs of monitor_owners, which keep a replica that decided on a stale
// view (paused, cut off from the database, or not yet told that a monitor moved) from
// writing what it decided.
//
// A replica that takes a monitor over claims it (claim_monitors_in): the monitor's row
// names it as owner and its epoch grows by one, whoever held it. Every write that follows
// from owning the monitor carries the epoch of the claim it was decided under, and checks
// it in its own transaction, locking the owner row FOR SHARE until the commit: a claim
// that moves the monitor meanwhile waits for that commit, and a write under an older
// epoch finds another and is refused whole. Nothing is checked in a read before the
// transaction, so no claim can slip in between the check and the write.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "storage/postgres/write_ops.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

// Store::claim_monitors, in a transaction that may write: the new epoch of each monitor.
Result<std::map<std::string, int64_t>> claim_monitors_in(Tx& tx, const std::string& owner,
                                                         const std::vector<std::string>& monitors);

// Ok when `monitor`'s epoch is `epoch` (its row then locked until the commit);
// store_error::kFenced otherwise, naming both.
Status check_fence(Tx& tx, const std::string& monitor, int64_t epoch);

// The same for a run of results in one statement: for each, whether it may be written
// (true for those that carry no epoch).
std::vector<bool> check_fences(Tx& tx, const std::vector<const RecordResult*>& results);

}  // namespace trainwatch::postgres
