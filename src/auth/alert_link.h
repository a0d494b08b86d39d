// AlertLink: the link in an alert that snoozes its monitor (Healthchecks' most asked-for
// button): whoever holds the alert may silence that monitor for a while, without a login,
// and nothing else. The link carries what it may do and proves it:
//
//   https://tw.example/snooze/412.1767312000.3f9c…(32 hex).rank0-health
//                             incident expires (unix s) HMAC-SHA256, cut to 128 bits  monitor
//
// signed with a key every replica shares (catalog/alert_links.h), so any replica
// reads what another signed, and a changed monitor, incident or expiry fails the check.
// It expires kAlertLinkLife after the alert, and is good for one use: the store keeps the
// used ones (storage/store.h, UseAlertLink) until they expire. Monitor names are
// [a-z0-9._-] (core/names.h), so the link needs no escaping and has nothing a chat's
// markup reads as formatting; the monitor comes last because its name may hold a '.'.
//
// Pure: the time and the key are given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::auth {

// Long enough for an alert at 3 a.m. read after breakfast; short enough that a forwarded
// mail does not silence the monitor next week.
inline constexpr Millis kAlertLinkLife = std::chrono::hours(24);

struct AlertLink {
  std::string monitor;
  std::optional<int64_t> incident_id;  // the incident the alert was about, when one
  SystemTime expires{};                // whole seconds
};

// The link's last path segment.
std::string sign_alert_link(std::string_view key, const AlertLink& link);

// What a link says, if `key` signed it and it has not expired at `now`. Errors:
// "link.invalid" (not a link this installation signed, or changed since),
// "link.expired" (its message says when).
Result<AlertLink> read_alert_link(std::string_view key, std::string_view token, SystemTime now);

}  // namespace trainwatch::auth
