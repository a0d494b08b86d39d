// Time-based one-time passwords (RFC 6238, as authenticator apps make them): HMAC-SHA1
// (OpenSSL) over the 30 s step since the epoch, 6 digits, the secret in base32 as the
// apps show it. Pure functions of the secret and the time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"

namespace trainwatch::auth {

inline constexpr int64_t kTotpStepSeconds = 30;

// The secret's bytes from base32 (RFC 4648; case, spaces and padding ignored); nullopt
// for any other character or fewer than 10 bytes (80 bits, RFC 4226's minimum).
std::optional<std::string> decode_base32_secret(std::string_view base32);

// The 6-digit code for one step (RFC 4226's HOTP of the step counter).
std::string totp_code(std::string_view secret, int64_t step);

// The step `now` falls in.
int64_t totp_step(SystemTime now);

// The step whose code `code` is, among the step of `now` and one either side (clocks
// drift and people type slowly); nullopt when none matches. The caller refuses a step it
// has already accepted for the same user, so a code cannot be used twice.
std::optional<int64_t> matching_totp_step(std::string_view secret, std::string_view code, SystemTime now);

}  // namespace trainwatch::auth
