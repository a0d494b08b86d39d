#include "storage/postgres/connection.h"

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <pqxx/pqxx>

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "core/redaction.h"
#include "storage/store_errors.h"

namespace trainwatch::postgres {
namespace {

// Whole seconds, at least one: libpq's keepalive keys and the server's count in seconds.
int64_t whole_seconds(Millis d) { return std::max<int64_t>(1, d.count() / 1000); }

std::string password_of(const std::string& url) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed || !parsed->has_password()) return {};
  return parsed->password();
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// libpq words the refusal of credentials in a few ways; all are an operator's to fix.
bool is_auth_failure(const std::string& message) {
  return contains(message, "authentication failed") || contains(message, "no password supplied") ||
         contains(message, "pg_hba.conf") || contains(message, "password is required") ||
         contains(message, "permission denied for database");
}

}  // namespace

std::string describe_target(std::string_view url) { return redact_url(url); }

// A vanished peer is noticed within `network`: probes start after half of it, one a
// second, and the peer is dropped after the other half of unanswered probes.
std::string with_bounds(const std::string& url, const DatabaseSessionLimits& limits) {
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return url;  // libpq judges it (config checked it already)
  boost::urls::url u = *parsed;
  auto params = u.params();
  auto add = [&](const char* key, const std::string& value) {
    if (!params.contains(key)) params.append({key, value});
  };
  const int64_t half = std::max<int64_t>(1, whole_seconds(limits.network) / 2);
  add("connect_timeout", std::to_string(kConnectTimeoutSeconds));
  add("application_name", "trainwatch");
  add("keepalives", "1");
  add("keepalives_idle", std::to_string(half));
  add("keepalives_interval", "1");
  add("keepalives_count", std::to_string(half));
  add("tcp_user_timeout", std::to_string(limits.network.count()));
  return std::string(u.buffer());
}

std::string session_settings(SessionRole role, const DatabaseSessionLimits& limits) {
  const int64_t half = std::max<int64_t>(1, whole_seconds(limits.network) / 2);
  std::string sql = fmt::format(
      "SET idle_in_transaction_session_timeout = {}; SET tcp_keepalives_idle = {}; "
      "SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = {}; SET tcp_user_timeout = {}",
      limits.idle_in_transaction.count(), half, half, limits.network.count());
  if (role != SessionRole::kWriter) {
    sql += fmt::format("; SET lock_timeout = {}; SET statement_timeout = {}", limits.lock_wait.count(),
                       limits.statement.count());
  }
  return sql;
}

std::string scrub(std::string message, const std::string& url) {
  const std::string password = password_of(url);
  if (password.empty()) return message;
  for (size_t at = message.find(password); at != std::string::npos; at = message.find(password, at + 3)) {
    message.replace(at, password.size(), "***");
  }
  return message;
}

Result<std::unique_ptr<pqxx::connection>> connect(const std::string& url, SessionRole role,
                                                  const DatabaseSessionLimits& limits) {
  try {
    auto conn = std::make_unique<pqxx::connection>(with_bounds(url, limits));
    pqxx::nontransaction tx(*conn);
    tx.exec(session_settings(role, limits));
    tx.commit();
    return std::unique_ptr<pqxx::connection>(std::move(conn));
  } catch (const std::exception& e) {
    std::string message = scrub(e.what(), url);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    for (char& c : message) c = c == '\n' ? ' ' : c;  // libpq's lines, one per host tried: one log line
    const std::string where = "cannot connect to " + describe_target(url) + ": ";
    if (is_auth_failure(message)) return make_error(store_error::kAuth, where + message);
    if (contains(message, "database") && contains(message, "does not exist")) {
      return make_error(store_error::kOpen, where + message);
    }
    return make_error(store_error::kUnavailable, where + message);
  }
}

FailureKind classify(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) return {"unavailable", true, true};
  // The connection went during COMMIT: the batch may or may not be stored. It is reported
  // as not stored (never acknowledged), and the caller may write it again.
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) return {"unavailable", true, true};
  const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e);
  if (sql == nullptr) return {"other", true, false};
  const std::string& state = sql->sqlstate();
  const std::string cls = state.substr(0, 2);
  if (state == "53100") return {"disk_full", true, false};
  // A value the schema refuses (23) or that is no valid data (22: bad encoding, out of
  // range): the operation's own fault; the store takes other writes fine.
  if (cls == "23" || cls == "22") return {"constraint", false, false};
  if (state == "25006") return {"read_only", true, false};  // a standby, or default_transaction_read_only
  if (cls == "08" || cls == "57")
    return {"unavailable", true, true};  // connection lost, server shutting down
  if (cls == "40" || cls == "53" || state == "55P03")
    return {"busy", true, false};  // conflicts, no resources, locks
  if (cls == "58") return {"io_error", true, false};
  if (cls == "XX") return {"corrupt", false, false};
  return {"other", true, false};
}

}  // namespace trainwatch::postgres
