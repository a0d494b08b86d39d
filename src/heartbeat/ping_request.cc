#include "heartbeat/ping_request.h"

namespace trainwatch::heartbeat {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at text[i] (overlongs and surrogates rejected), or 0.
size_t valid_sequence(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

Result<PingAction> parse_ping_action(std::string_view suffix) {
  if (suffix.empty()) return PingAction{PingKind::kSuccess, 0};
  if (suffix == "start") return PingAction{PingKind::kStart, 0};
  if (suffix == "fail") return PingAction{PingKind::kFail, 0};
  if (suffix == "log") return PingAction{PingKind::kLog, 0};
  // At most three digits: longer numbers can only be out of range, and "0000…" tricks
  // never reach a conversion that could overflow.
  if (suffix.size() <= 3 && suffix.find_first_not_of("0123456789") == std::string_view::npos) {
    int code = 0;
    for (char c : suffix) code = code * 10 + (c - '0');
    if (code <= 255) return PingAction{PingKind::kExitCode, code};
  }
  return make_error("ping.bad_action",
                    "'" + std::string(suffix.substr(0, 64)) +
                        "' is not a ping action; expected start, fail, log or an exit code 0-255");
}

Result<PingAction> parse_push_status(const std::optional<std::string>& status) {
  if (!status || *status == "up") return PingAction{PingKind::kSuccess, 0};
  if (*status == "down") return PingAction{PingKind::kFail, 0};
  return make_error("ping.bad_status",
                    "status '" + status->substr(0, 64) + "' is not known; expected up or down");
}

KeptBody keep_body(std::string_view body, size_t limit) {
  KeptBody out;
  out.text.reserve(std::min(body.size(), limit));
  for (size_t i = 0; i < body.size();) {
    const size_t n = valid_sequence(body, i);
    const std::string_view piece = n == 0 ? kReplacement : body.substr(i, n);
    if (out.text.size() + piece.size() > limit) {
      out.truncated = true;
      break;
    }
    out.text.append(piece);
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace trainwatch::heartbeat
