#include "auth/alert_link.h"

#include <charconv>
#include <vector>

#include "auth/sha256.h"
#include "core/constant_time.h"
#include "core/names.h"
#include "core/time_format.h"

namespace trainwatch::auth {
namespace {

constexpr size_t kMacChars = 32;  // 128 bits of the HMAC: unforgeable, and a short link
constexpr char kSeparator = '.';

std::string mac_of(std::string_view key, std::string_view signed_part) {
  // A purpose prefix: the key signs nothing else today, and a later use cannot be confused with this one.
  return hmac_sha256_hex(key, "snooze\n" + std::string(signed_part)).substr(0, kMacChars);
}

std::optional<int64_t> number(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// The three fixed parts and the monitor after them (whose name may hold the separator).
std::vector<std::string_view> split(std::string_view token) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (parts.size() < 3) {
    const size_t end = token.find(kSeparator, start);
    if (end == std::string_view::npos) return {};
    parts.push_back(token.substr(start, end - start));
    start = end + 1;
  }
  parts.push_back(token.substr(start));
  return parts;
}

Error invalid() {
  return make_error("link.invalid", "this link was not made by this trainwatch, or was changed");
}

}  // namespace

std::string sign_alert_link(std::string_view key, const AlertLink& link) {
  const int64_t expires_s = to_unix_ms(link.expires) / 1000;
  const std::string incident = link.incident_id ? std::to_string(*link.incident_id) : std::string();
  const std::string mac =
      mac_of(key, incident + kSeparator + std::to_string(expires_s) + kSeparator + link.monitor);
  return incident + kSeparator + std::to_string(expires_s) + kSeparator + mac + kSeparator + link.monitor;
}

Result<AlertLink> read_alert_link(std::string_view key, std::string_view token, SystemTime now) {
  if (key.empty() || token.size() > kMaxNameLength + 80) return invalid();
  const auto parts = split(token);
  if (parts.size() != 4 || !valid_name(parts[3])) return invalid();
  const std::string signed_part =
      std::string(parts[0]) + kSeparator + std::string(parts[1]) + kSeparator + std::string(parts[3]);
  if (!constant_time_equal(mac_of(key, signed_part), parts[2])) return invalid();
  const auto incident = parts[0].empty() ? std::optional<int64_t>() : number(parts[0]);
  const auto expires_s = number(parts[1]);
  if (!expires_s || (!parts[0].empty() && !incident)) return invalid();
  AlertLink link{std::string(parts[3]), incident, from_unix_ms(*expires_s * 1000)};
  if (now >= link.expires)
    return make_error("link.expired", "this link expired at " + format_rfc3339(link.expires) +
                                          "; snooze the monitor from its page instead");
  return link;
}

}  // namespace trainwatch::auth
