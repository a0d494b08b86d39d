// The tokens of heartbeat monitors configured without one: generated once
// (heartbeat/tokens.h) and kept in the store under the monitor's name, so a monitor's ping
// URL stays the same across restarts and reloads.
#pragma once

#include "config/config.h"
#include "core/random.h"
#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::catalog {

// Sets the token of every heartbeat monitor of `config` that has none: the stored one, or
// a new one that is committed before this returns (it waits for the store's writer, so
// call it at start-up or reload, not per request). Replicas that start together agree:
// the first token stored wins and every replica reads it back. Errors: the store's.
Status resolve_tokens(Config& config, Store& store, Random& random);

}  // namespace trainwatch::catalog
