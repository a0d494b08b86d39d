// Reading a ping request: which kind of ping a URL asks for, and the part of its body
// that is kept. Pure; the HTTP routes call these and turn errors into 400.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/ping.h"
#include "core/result.h"

namespace trainwatch::heartbeat {

struct PingAction {
  PingKind kind = PingKind::kSuccess;
  int exit_code = 0;
};

// The path after /ping/{token}: "" success, "start", "fail", "log", or an exit code
// "0".."255" (0 is a success). Anything else is an error ("ping.bad_action": 400).
Result<PingAction> parse_ping_action(std::string_view suffix);

// Uptime Kuma's push form: status "up" (or absent) is a success, "down" a fail.
Result<PingAction> parse_push_status(const std::optional<std::string>& status);

struct KeptBody {
  std::string text;
  bool truncated = false;
};

// The first `limit` bytes of `body`, cut at a character boundary, with every byte that
// is not valid UTF-8 replaced by U+FFFD so the API can always show it as JSON text.
KeptBody keep_body(std::string_view body, size_t limit);

}  // namespace trainwatch::heartbeat
