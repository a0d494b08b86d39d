// Email over SMTP (libcurl): smtp:// with STARTTLS, or smtps:// (TLS from the start);
// optional AUTH; several recipients; a multipart/alternative body with a text part and
// an HTML part (both base64, so any UTF-8 and any line length are safe).
//   - name: oncall-email
//     type: email
//     smtp_url: smtp://mail.example.com:587
//     username: ${SMTP_USER}          # optional
//     password: ${SMTP_PASSWORD}      # optional
//     from: trainwatch@example.com
//     to: [oncall@example.com, ml-team@example.com]
//     starttls: required              # smtp:// only: required (default) | try | off
//     tls_verify: true
#include <boost/json.hpp>

#include "alerting/providers/provider_util.h"
#include "alerting/providers/providers.h"
#include "core/time_format.h"

namespace trainwatch::alerting {
namespace {

std::string base64(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const auto n = (static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16) |
                   (static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8) |
                   static_cast<uint32_t>(static_cast<unsigned char>(data[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < data.size()) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(data[i])) << 16;
    if (i + 1 < data.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// Base64 in lines of 76 characters, as MIME requires.
std::string base64_lines(std::string_view data) {
  const std::string encoded = base64(data);
  std::string out;
  for (size_t i = 0; i < encoded.size(); i += 76) out += encoded.substr(i, 76) + "\r\n";
  return out;
}

// RFC 2047 encoded-word for a header with non-ASCII text (the emoji in the title).
std::string encode_header(std::string_view text) { return "=?UTF-8?B?" + base64(text) + "?="; }

std::string rfc5322_date(SystemTime t) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[64];
  std::strftime(buffer, sizeof buffer, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buffer;
}

bool plausible_address(const std::string& a) {
  const size_t at = a.find('@');
  return at != std::string::npos && at > 0 && at + 1 < a.size() &&
         a.find_first_of(" <>\r\n,") == std::string::npos;
}

class EmailProvider final : public Provider {
 public:
  EmailProvider(std::string url, std::string username, std::string password, std::string from,
                std::vector<std::string> to, OutboundRequest::Tls starttls, bool tls_verify)
      : url_(std::move(url)),
        username_(std::move(username)),
        password_(std::move(password)),
        from_(std::move(from)),
        to_(std::move(to)),
        starttls_(starttls),
        tls_verify_(tls_verify) {}

  OutboundRequest build(const AlertEvent&, const Message& m, int64_t delivery_id,
                        SystemTime now) const override {
    const std::string boundary =
        "trainwatch-" + std::to_string(delivery_id) + "-" + std::to_string(to_unix_ms(now));
    std::string to_header;
    for (const auto& a : to_) to_header += (to_header.empty() ? "" : ", ") + a;
    const std::string domain = from_.substr(from_.find('@') + 1);
    std::string mail;
    mail += "Date: " + rfc5322_date(now) + "\r\n";
    mail += "From: trainwatch <" + from_ + ">\r\n";
    mail += "To: " + to_header + "\r\n";
    mail += "Subject: " + encode_header(m.title) + "\r\n";
    mail += "Message-ID: <" + boundary + "@" + domain + ">\r\n";
    mail += "MIME-Version: 1.0\r\n";
    mail += "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\r\n\r\n";
    mail += "--" + boundary +
            "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
    mail += base64_lines(message_text(m));
    mail += "--" + boundary +
            "\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
    mail += base64_lines(message_html(m));
    mail += "--" + boundary + "--\r\n";

    OutboundRequest r;
    r.protocol = OutboundRequest::Protocol::kSmtp;
    r.url = url_;
    r.body = std::move(mail);
    r.mail_from = from_;
    r.recipients = to_;
    r.username = username_;
    r.password = password_;
    r.starttls = starttls_;
    r.tls_verify = tls_verify_;
    return r;
  }

  std::string target() const override {
    std::string list;
    for (const auto& a : to_) list += (list.empty() ? "" : ", ") + a;
    return url_origin(url_) + " to " + list;
  }

 private:
  std::string url_;
  std::string username_;
  std::string password_;
  std::string from_;
  std::vector<std::string> to_;
  OutboundRequest::Tls starttls_;
  bool tls_verify_;
};

}  // namespace

std::unique_ptr<Provider> make_email(ChannelFields& f) {
  auto url = f.url("smtp_url", true, {"smtp", "smtps"});
  auto username = f.string("username");
  auto password = f.string("password");
  auto from = f.string("from", true);
  auto to = f.list("to", true);
  auto starttls = f.choice("starttls", {"required", "try", "off"});
  auto tls_verify = f.boolean("tls_verify");
  if (from && !plausible_address(*from))
    f.error("from", "found '" + *from + "'; expected an address such as trainwatch@example.com");
  if (to) {
    for (const auto& a : *to) {
      if (!plausible_address(a))
        f.error("to", "found '" + a + "'; expected addresses such as oncall@example.com");
    }
  }
  if (password && !username) f.error("password", "set without a username; expected both or neither");
  if (url && url->rfind("smtps://", 0) == 0 && starttls) {
    f.error("starttls", "set for an smtps:// URL, which is TLS from the start; expected no starttls key");
  }
  f.finish();
  if (!url || !from || !to) return nullptr;
  OutboundRequest::Tls mode = OutboundRequest::Tls::kStartTlsRequired;
  if (url->rfind("smtps://", 0) == 0 || starttls == "off") mode = OutboundRequest::Tls::kNone;
  if (starttls == "try") mode = OutboundRequest::Tls::kStartTlsTry;
  return std::make_unique<EmailProvider>(*url, username.value_or(""), password.value_or(""), *from, *to, mode,
                                         tls_verify.value_or(true));
}

}  // namespace trainwatch::alerting
