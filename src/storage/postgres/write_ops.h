// The SQL of each write operation, run by the writer (writer.h) inside the batch's
// transaction, each under its own savepoint (a run of pings or plain results shares one:
// insert_pings, insert_results). One file per group of
// operations: write_results.cc (results, states, incidents, rollups, pruning), write_heartbeat.cc (pings,
// tokens), write_outbox.cc (deliveries), write_catalog.cc (API monitors and windows),
// write_incident_updates.cc (updates posted about incidents), write_jobs.cc (node reports).
//
// Contract: each returns the operation's own failure (store.not_found) as a Status and
// throws pqxx exceptions for the store's failures; the writer classifies those.
// prepare_write_statements must run once on every new connection before any of them.
#pragma once

#include <pqxx/pqxx>

#include "storage/postgres/connection.h"
#include "storage/store.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {

using Tx = pqxx::transaction_base;

void prepare_write_statements(pqxx::connection_base& conn);

Status run_op(Tx& tx, const RecordResult& op);
Status run_op(Tx& tx, const SaveState& op);
Status run_op(Tx& tx, const OpenIncident& op);
Status run_op(Tx& tx, const CloseIncident& op);
Status run_op(Tx& tx, const PruneResults& op);
Status run_op(Tx& tx, const RecordPing& op);
Status run_op(Tx& tx, const SaveToken& op);
Status run_op(Tx& tx, const UpdateDelivery& op);
Status run_op(Tx& tx, const RecordStoreOutage& op);
Status run_op(Tx& tx, const SaveApiMonitor& op);
Status run_op(Tx& tx, const DeleteApiMonitor& op);
Status run_op(Tx& tx, const SaveApiWindow& op);
Status run_op(Tx& tx, const DeleteApiWindow& op);
Status run_op(Tx& tx, const SaveApiChannel& op);
Status run_op(Tx& tx, const DeleteApiChannel& op);
Status run_op(Tx& tx, const AddIncidentUpdate& op);
Status run_op(Tx& tx, const SaveNodeReport& op);
Status run_op(Tx& tx, const SaveJobMemo& op);
Status run_op(Tx& tx, const SaveUser& op);
Status run_op(Tx& tx, const DeleteUser& op);
Status run_op(Tx& tx, const SaveApiToken& op);
Status run_op(Tx& tx, const RevokeApiToken& op);
Status run_op(Tx& tx, const SaveSharedKey& op);
Status run_op(Tx& tx, const UseAlertLink& op);
Status run_op(Tx& tx, const AppendAudit& op);
Status run_op(Tx& tx, const PruneAudit& op);

// Runs of operations in as few statements as can hold them (multi_row.h): the writer's
// path for consecutive RecordPing, and for consecutive plain RecordResult, in one batch;
// a round trip per table instead of several per operation.
void insert_pings(Tx& tx, const std::vector<const RecordPing*>& pings);
// A result that opens or closes no incident, queues no alert and asks no compare-and-set:
// only its history, rollups and state, which insert_results writes together. Each
// result's outcome, in order: those whose epoch is fenced out (fence.h) fail with
// store_error::kFenced and store nothing; the others are written.
bool is_plain(const RecordResult& op);
std::vector<Status> insert_results(Tx& tx, const std::vector<const RecordResult*>& results);

// Used by RecordResult for its outbox rows (write_outbox.cc).
void insert_delivery(Tx& tx, const NewDelivery& d);

// Times as stored: ms since the Unix epoch, NULL for none.
inline int64_t ms(SystemTime t) { return to_unix_ms(t); }
inline std::optional<int64_t> ms(const std::optional<SystemTime>& t) {
  return t ? std::optional<int64_t>(to_unix_ms(*t)) : std::nullopt;
}

}  // namespace trainwatch::postgres
