// Conditions on an HTTP check's response, in Gatus' syntax:
//   "[STATUS] == 200", "[RESPONSE_TIME] < 500", "[BODY].status == ok",
//   "[BODY].training.overflow_steps == 0", "[BODY].ranks[0].step > 10",
//   "len([BODY].ranks) == 8", "has([BODY].gpus)", "[BODY].name == any(a, b)",
//   "[BODY].host == pat(node-*)", "[BODY] == pat(*ok*)", "[CERTIFICATE_EXPIRATION] > 168h"
// Operators: == != < <= > >=. Placeholders: [STATUS], [RESPONSE_TIME] (ms), [BODY]
// with an optional JSON path; for dns monitors [DNS_RCODE] ("[DNS_RCODE] == NOERROR"),
// for icmp monitors [PACKET_LOSS] (percent); for https monitors [CERTIFICATE_EXPIRATION]
// (the TLS leaf certificate's validity left, compared with a duration such as 168h or 7d,
// or with milliseconds). Which monitor type may use which is the loader's rule. Parsed
// once at config load; evaluated per check.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace trainwatch {

// What a condition is evaluated against.
struct ConditionInput {
  int status = 0;  // HTTP status code
  double response_time_ms = 0;
  std::string_view body;            // raw body; a dns check's answers (checks/dns_verdict.h)
  std::string_view dns_rcode = {};  // "NOERROR", "NXDOMAIN", ...
  double packet_loss_pct = 0;
  // Validity the server's leaf certificate has left (negative: expired); nullopt when no
  // TLS certificate was seen (a plain http:// response).
  std::optional<double> certificate_expiration_ms = {};
};

struct ConditionOutcome {
  bool ok = true;
  // On failure, what was found against what was expected, for incident causes:
  //   "[BODY].status == degraded, expected ok", "[STATUS] == 503, expected 200",
  //   "[RESPONSE_TIME] == 812, expected < 500", "[BODY].gpus is missing, expected has(...)"
  std::string description;
};

class Condition {
 public:
  // Parses one condition. The error message says what is wrong and where in the text
  // (1-based character), e.g. "unknown placeholder [BOD] at character 1; expected
  // [STATUS], [RESPONSE_TIME] or [BODY]".
  static Result<Condition> parse(std::string_view text);

  const std::string& text() const;
  // The placeholder as written, JSON path included: "[STATUS]", "[BODY].ranks[0]".
  const std::string& placeholder() const;
  // True when it reads [CERTIFICATE_EXPIRATION]: the check must then capture the certificate.
  bool reads_certificate_expiration() const;

  ~Condition();
  Condition(const Condition&);
  Condition& operator=(const Condition&);
  Condition(Condition&&) noexcept;
  Condition& operator=(Condition&&) noexcept;

 private:
  friend std::vector<ConditionOutcome> evaluate_conditions(const std::vector<Condition>&,
                                                           const ConditionInput&);
  struct Impl;
  explicit Condition(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Evaluates every condition against one response; the body is parsed as JSON at most
// once, and only if a condition reads it. Outcomes are in the conditions' order.
std::vector<ConditionOutcome> evaluate_conditions(const std::vector<Condition>& conditions,
                                                  const ConditionInput& input);

}  // namespace trainwatch
