// What anonymous readers may see of text that can carry secrets: check causes that quote
// a target's response, and monitor URLs. Pure string functions; every view that shows
// such text picks one form by its reader's Audience.
//
// A cause marks each value it took from a response body (mark_body_value), so the
// redaction knows exactly what came from the target without the engine, the store or
// the alerting carrying a second text: the marks travel with the cause everywhere and
// are taken out (cause_for) where it is shown.
//   stored:  "HTTP 503; [BODY].status == \x02degraded\x03, expected ok"
//   admin:   "HTTP 503; [BODY].status == degraded, expected ok"
//   public:  "HTTP 503; [BODY].status == (redacted), expected ok"
#pragma once

#include <string>
#include <string_view>

namespace trainwatch {

// Who reads a view (views/audience.h), one per role and one for nobody signed in: an admin
// sees everything; an editor everything but notification channels' targets and what their
// receivers answered (recipients, topics, chat ids, hosts, delivery errors); a viewer also
// not the monitors' secrets (ping URLs, credentials in URLs, monitor specs); the public
// what a status page may show. Every copy of a view shared between readers is kept per
// audience (http/fresh_cache.h).
enum class Audience { kPublic, kViewer, kEditor, kAdmin };

// "public", "viewer", "editor", "admin".
std::string_view audience_name(Audience audience);
// An editor or an admin: reads the monitors' secrets (above).
inline bool sees_monitor_secrets(Audience audience) {
  return audience == Audience::kEditor || audience == Audience::kAdmin;
}

// The control characters around a value taken from a response body (STX, ETX); they
// never occur in a marked value, since mark_body_value removes them from it.
inline constexpr char kBodyValueOpen = '\x02';
inline constexpr char kBodyValueClose = '\x03';
// What the public sees in place of a marked value.
inline constexpr std::string_view kRedactedValue = "(redacted)";

// `value` between the marks, with any mark characters in it removed (so a body cannot
// close the mark early and leak the rest).
std::string mark_body_value(std::string_view value);

// The cause as `audience` may read it: for kAdmin the marks removed, for kPublic each
// marked value replaced by kRedactedValue. An unclosed mark redacts to the end.
std::string cause_for(std::string_view cause, Audience audience);

// A URL without its secrets: userinfo and query (and fragment) replaced by "***":
//   "https://user:pass@host:8443/x?key=s#f" -> "https://***@host:8443/x?***"
// Text that is not an absolute URL has only its query cut.
std::string redact_url(std::string_view url);

// The URL as `audience` may read it: whole for an editor or admin, redact_url for others.
std::string url_for(std::string_view url, Audience audience);

}  // namespace trainwatch
