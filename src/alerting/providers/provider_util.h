// Small helpers the providers share: URL joining and redaction, bounded text.
#pragma once

#include <string>
#include <string_view>

namespace trainwatch::alerting {

// "https://hooks.slack.com/services/T/B/secret" -> "https://hooks.slack.com": what may be
// shown of a URL (API responses, logs). Paths and queries often carry tokens.
std::string url_origin(std::string_view url);
// base without trailing '/' + path (which starts with '/').
std::string join_url(std::string_view base, std::string_view path);
// At most `max` bytes, cut at a UTF-8 boundary, "…" appended when cut.
std::string cut_text(std::string_view text, size_t max);
// Text for a Slack message: & < > as &amp; &lt; &gt; (escape_markup_text, Slack's own
// escaping), in at most `max` bytes (Block Kit rejects a longer text): cut at a character
// boundary and never inside an entity, "…" appended when cut. Without the escaping
// "<!channel>" in a cause or a rank's error text would notify the whole channel, and
// "<https://x|y>" would render as a link with any label.
std::string slack_text(std::string_view text, size_t max);

}  // namespace trainwatch::alerting
