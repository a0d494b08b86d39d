// Connecting to PostgreSQL, and what its errors mean to a Store.
//
// The URL is libpq's (postgresql://user:pass@host:port/db?sslmode=...): it goes to libpq
// whole, so PGPASSWORD, PGPASSFILE (~/.pgpass), PGSSLMODE and the other PG* variables
// work as libpq users expect. Bounds that the URL does not set are added to it:
// connect_timeout (a host that drops packets fails a connect after kConnectTimeout
// instead of hanging the writer), TCP keepalives and tcp_user_timeout (a peer that
// vanished is noticed after DatabaseSessionLimits::network).
//
// Session bounds (core/database_session.h): once connected, one round trip sets the
// server's side of the session: idle_in_transaction_session_timeout and the server's TCP
// keepalives and tcp_user_timeout on every session; lock_timeout and statement_timeout
// on the sessions of the roles that must not wait (reads and claims, the beat). The
// writer keeps no lock_timeout: it takes the tables it writes before any row
// (Writer::lock_fenced_tables), so while it waits on a table it holds nothing a claim
// needs, and its waits show in /healthz as late writes; a writer that stalls inside a
// transaction loses it, and its locks, to the idle bound like every session.
//
// Secrets: no message made here contains the password; libpq never echoes it, and
// messages are scrubbed of it anyway. Describe a target with describe_target().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/database_session.h"
#include "core/result.h"
#include "storage/store_errors.h"

// pqxx::connection itself, not its base: connection_base has no virtual destructor.
#include <pqxx/connection>

namespace trainwatch::postgres {

inline constexpr int kConnectTimeoutSeconds = 5;

// The NOTIFY channel of nudges: a replica that stored a ping for a monitor it does not
// own tells the owner (RecordPing::tell_owner, MemberRegistry::await_nudges).
inline constexpr std::string_view kNudgeChannel = "trainwatch_nudge";

// The URL as it may be logged: user, password and query replaced (core/redaction.h).
std::string describe_target(std::string_view url);

// What a session is for, which decides the bounds set on it (above).
enum class SessionRole { kWriter, kReader, kMembers };

// Opens one connection. A connection that breaks is dropped by its user, not reused.
// Errors: store_error::kAuth (the server refused the credentials), store_error::kUnavailable (cannot
// reach it, or it is starting or shutting down), store_error::kOpen (anything else).
Result<std::unique_ptr<pqxx::connection>> connect(const std::string& url, SessionRole role,
                                                  const DatabaseSessionLimits& limits);

// The statements that set a session's bounds (exposed for tests: what each role gets).
std::string session_settings(SessionRole role, const DatabaseSessionLimits& limits);
// The URL with the client side's bounds added where it sets none.
std::string with_bounds(const std::string& url, const DatabaseSessionLimits& limits);

// Why an operation failed, as counted in WriteHealth::failures_by_reason, and whether the
// same operation may succeed later (store_error::kUnavailable) or not (store_error::kWrite).
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
