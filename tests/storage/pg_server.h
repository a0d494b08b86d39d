// PgServer: a PostgreSQL cluster of the test process's own, for the postgres::PostgresStore tests.
//
// Started on first use (initdb + pg_ctl as the `postgres` user, in a temp dir, on a free
// loopback port, its unix socket inside the temp dir, trust authentication) and stopped
// at the end of the test program by a gtest Environment. Each test gets a database of its
// own from create_database(), so tests never see each other's rows.
//
// The binaries come from Debian's postgresql-15 (scripts/setup.sh installs it). When
// they are missing, create_database() returns an error and the PostgreSQL tests fail:
// a store nobody tested is not skipped silently.
//
// Threading: the test's main thread only.
#pragma once

#include <string>

#include "core/result.h"

namespace trainwatch::testing {

class PgServer {
 public:
  static PgServer& instance();

  // A new empty database; its URL (postgresql://postgres@127.0.0.1:PORT/NAME).
  Result<std::string> create_database();

  // For the outage tests: `pg_ctl stop -m fast`, and start again on the same port.
  Status stop();
  Status start();

  uint16_t port() const { return port_; }
  // Stops the server if it ran and removes its directory. Called by the Environment.
  void shut_down();

 private:
  PgServer() = default;
  Status ensure_started();

  bool initialized_ = false;
  bool running_ = false;
  std::string dir_;
  uint16_t port_ = 0;
  int next_database_ = 0;
};

}  // namespace trainwatch::testing
