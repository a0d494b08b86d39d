// How long a session of a shared database (PostgreSQL, store.url) may hold what it
// holds, and wait for what it waits on. The config reads them (store.*, docs/
// configuration.md); the PostgreSQL store sets them on every session it opens
// (storage/postgres/connection.h). Here, apart from both, so that the defaults are
// written once.
//
// Why these defaults: replicas take a silent replica's monitors kMemberTtl (6 s) after
// its last beat, and it stops acting at its lease, 4.5 s after that beat began
// (cluster/membership.h). A replica stopped or cut off inside a transaction keeps its row
// locks (the monitors' owner rows among them) until PostgreSQL ends that transaction; with
// PostgreSQL's defaults that is never, or two hours of TCP keepalives later. So every
// bound below is well inside the lease: the locks of a stalled replica are gone before its
// monitors are due elsewhere, and a takeover never waits behind them.
#pragma once

#include "core/clock.h"

namespace trainwatch {

struct DatabaseSessionLimits {
  // idle_in_transaction_session_timeout, on every session: a transaction whose client
  // sends nothing for this long (stopped, cut off, its packets dropped) is ended by the
  // server and its locks released. No session of trainwatch's idles inside a transaction
  // on purpose: its statements go back to back.
  Millis idle_in_transaction{2'000};
  // lock_timeout on the sessions that read, claim monitors and beat: a lock held this long
  // by someone else (an operator's LOCK TABLE, a stalled writer) fails the statement
  // instead of stalling the replica's beat, its claims or its checks' reads.
  Millis lock_wait{500};
  // statement_timeout on the same sessions: no read, claim or beat runs longer.
  Millis statement{4'000};
  // TCP, both ends: libpq's keepalives and tcp_user_timeout on this side, the server's
  // tcp_keepalives_* and tcp_user_timeout on its side. A peer that vanished (its packets
  // dropped, unacknowledged) is taken as gone after about this long.
  Millis network{4'000};
};

}  // namespace trainwatch
