// Generated heartbeat tokens: a monitor configured without `token` gets a 128-bit random
// one the first time the server sees it, kept in the store under the monitor's name so
// its ping URL stays the same across restarts and reloads.
#pragma once

#include <string>

#include "config/config.h"
#include "core/random.h"
#include "core/result.h"
#include "storage/store.h"

namespace trainwatch::heartbeat {

// 16 random bytes in the UUID v4 layout Healthchecks' URLs use:
// "6f1c0c1e-2c8b-4d6f-9f5a-3f0b9b7d2a11".
std::string generate_token(Random& random);

// Sets the token of every heartbeat monitor of `config` that has none: the stored one, or
// a new one that is committed before this returns (it waits for the store's writer, so
// call it at start-up or reload, not per request). Errors: the store's.
Status resolve_tokens(Config& config, Store& store, Random& random);

}  // namespace trainwatch::heartbeat
