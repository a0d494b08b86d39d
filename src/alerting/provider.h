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

// What a provider also implements when its receiver forgets a firing alert unless it
// hears of it again (Alertmanager): the dispatcher then re-sends every alert it delivered
// as firing, each resend_every(), while its incident is open (firing_alerts.h). Re-sends
// are no outbox rows: nobody else sees them, and after a restart they are rebuilt from the
// delivered rows of the incidents still open.
class Resender {
 public:
  virtual ~Resender() = default;
  virtual Millis resend_every() const = 0;
  // One request telling the receiver that these alerts (DOWNs or reminders, at most
  // kMaxResendBatch) still fire: the same identity as build() sent, a fresh expiry.
  virtual OutboundRequest build_resend(const std::vector<std::pair<AlertEvent, Message>>& alerts,
                                       SystemTime now) const = 0;
};

// At most this many alerts in one re-send request, as Prometheus batches them.
inline constexpr size_t kMaxResendBatch = 64;

class Provider {
 public:
  virtual ~Provider() = default;
  // `delivery_id` is 0 for tests that are not stored.
  virtual OutboundRequest build(const AlertEvent& event, const Message& message, int64_t delivery_id,
                                SystemTime now) const = 0;
  // Where it sends, without secrets: "https://hooks.slack.com", "smtp://mail.example.com:587".
  virtual std::string target() const = 0;
  // Itself when it re-sends firing alerts; nullptr (the default) when one send is enough.
  virtual const Resender* resender() const { return nullptr; }
};

}  // namespace trainwatch::alerting
