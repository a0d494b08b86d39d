// Generated heartbeat tokens: a monitor configured without `token` gets a 128-bit random
// one the first time the server sees it (kept in the store by catalog/heartbeat_tokens.h,
// so its ping URL stays the same across restarts and reloads).
#pragma once

#include <string>

#include "core/random.h"

namespace trainwatch::heartbeat {

// 16 random bytes in the UUID v4 layout Healthchecks' URLs use:
// "6f1c0c1e-2c8b-4d6f-9f5a-3f0b9b7d2a11".
std::string generate_token(Random& random);

}  // namespace trainwatch::heartbeat
