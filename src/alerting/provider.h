// Provider: turns a rendered Message into the one request a service expects (Slack's
// Block Kit, PagerDuty's Events v2, an SMTP mail, ...). One provider per file under
// providers/; each validates its own config keys (channel_fields.h) and never puts a
// secret into `target()` or into an error message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "alerting/event.h"
#include "alerting/message.h"
#include "core/clock.h"

namespace trainwatch::alerting {

// What the transport sends: an HTTP request, or (email) one SMTP transaction.
struct OutboundRequest {
  enum class Protocol { kHttp, kSmtp };
  Protocol protocol = Protocol::kHttp;
  std::string url;  // may hold a secret (Telegram token, Slack hook): never logged
  std::string method = "POST";
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // at most kMaxRequestBytes
  // SMTP only.
  std::string mail_from;
  std::vector<std::string> recipients;
  std::string username;
  std::string password;
  enum class Tls { kNone, kStartTlsRequired, kStartTlsTry } starttls = Tls::kNone;
  // Both protocols.
  bool tls_verify = true;
  Millis timeout{10'000};
};

// The bound on one request body: rendering cuts long fields well before it; a request
// that still exceeds it is not sent and the delivery fails permanently with the reason.
inline constexpr size_t kMaxRequestBytes = 256 * 1024;

class Provider {
 public:
  virtual ~Provider() = default;
  // `delivery_id` is 0 for tests that are not stored.
  virtual OutboundRequest build(const AlertEvent& event, const Message& message, int64_t delivery_id,
                                SystemTime now) const = 0;
  // Where it sends, without secrets: "https://hooks.slack.com", "smtp://mail.example.com:587".
  virtual std::string target() const = 0;
};

}  // namespace trainwatch::alerting
