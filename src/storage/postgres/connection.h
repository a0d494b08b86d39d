// Connecting to PostgreSQL, and what its errors mean to a Store.
//
// The URL is libpq's (postgresql://user:pass@host:port/db?sslmode=...): it goes to libpq
// whole, so PGPASSWORD, PGPASSFILE (~/.pgpass), PGSSLMODE and the other PG* variables
// work as libpq users expect. Bounds that the URL does not set are added to it:
// connect_timeout (a host that drops packets fails a connect after kConnectTimeout
// instead of hanging the writer) and TCP keepalives (a peer that vanished is noticed).
//
// Secrets: no message made here contains the password; libpq never echoes it, and
// messages are scrubbed of it anyway. Describe a target with describe_target().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

// pqxx::connection itself, not its base: connection_base has no virtual destructor.
#include <pqxx/connection>

namespace trainwatch::postgres {

inline constexpr int kConnectTimeoutSeconds = 5;

// The NOTIFY channel of nudges: a replica that stored a ping for a monitor it does not
// own tells the owner (RecordPing::tell_owner, MemberRegistry::await_nudges).
inline constexpr std::string_view kNudgeChannel = "trainwatch_nudge";

// The URL as it may be logged: user, password and query replaced (core/redaction.h).
std::string describe_target(std::string_view url);

// Opens one connection. A connection that breaks is dropped by its user, not reused.
// Errors: "store.auth" (the server refused the credentials), "store.unavailable" (cannot
// reach it, or it is starting or shutting down), "store.open" (anything else).
Result<std::unique_ptr<pqxx::connection>> connect(const std::string& url);

// Why an operation failed, as counted in WriteHealth::failures_by_reason, and whether the
// same operation may succeed later ("store.unavailable") or not ("store.write").
// "unavailable" is a lost or refused connection; the rest are SQLite's reasons.
struct FailureKind {
  const char* reason;
  bool passes;
  bool connection_lost;  // the connection is unusable: drop it and reconnect
};
FailureKind classify(const std::exception& e);

// `message` with every occurrence of the URL's password replaced by "***".
std::string scrub(std::string message, const std::string& url);

}  // namespace trainwatch::postgres
