#include "checks/http_verdict.h"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "core/redaction.h"

namespace trainwatch::checks {
namespace {

// Bodies longer than this are not read for a reason: the first reason of a health answer
// comes within its first few hundred bytes.
constexpr size_t kMaxReasonBody = 64 * 1024;

// The first reason a health answer gives for failing, as a trainwatch agent's /health
// (`"reasons": [{"code", "message"}]`) or a server's /healthz (`"reason"`) says it; "" for
// any other body.
std::string body_reason(std::string_view body) {
  if (body.empty() || body.size() > kMaxReasonBody || body.front() != '{') return {};
  boost::system::error_code ec;
  const boost::json::value v = boost::json::parse(body, ec);
  if (ec || !v.is_object()) return {};
  const auto& o = v.as_object();
  if (const auto* reasons = o.if_contains("reasons");
      reasons && reasons->is_array() && !reasons->as_array().empty()) {
    const auto& first = reasons->as_array().front();
    if (const auto* m = first.is_object() ? first.as_object().if_contains("message") : nullptr;
        m && m->is_string())
      return std::string(m->as_string());
  }
  if (const auto* reason = o.if_contains("reason"); reason && reason->is_string())
    return std::string(reason->as_string());
  return {};
}

bool reads_status(const Condition& condition) {
  return condition.text().find("[STATUS]") != std::string::npos;
}

void append(std::string& cause, std::string_view part) {
  if (!cause.empty()) cause += "; ";
  cause += part;
}

}  // namespace

HttpVerdict judge_http_response(const HttpCheckSpec& spec, int status, std::string_view body,
                                double latency_ms, std::optional<double> certificate_ms_left) {
  HttpVerdict verdict;
  bool status_judged = false;
  bool status_failed = false;
  std::string details;

  ConditionInput input{status, latency_ms, body};
  input.certificate_expiration_ms = certificate_ms_left;
  auto outcomes = evaluate_conditions(spec.conditions, input);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const bool about_status = reads_status(spec.conditions[i]);
    status_judged = status_judged || about_status;
    if (outcomes[i].ok) continue;
    verdict.ok = false;
    // A failed status condition is said once, as "HTTP 503", at the front.
    if (about_status) {
      status_failed = true;
    } else {
      append(details, outcomes[i].description);
    }
  }
  if (!status_judged && (status < 200 || status > 399)) {
    verdict.ok = false;
    status_failed = true;
  }
  if (!spec.keyword.empty() && body.find(spec.keyword) == std::string_view::npos) {
    verdict.ok = false;
    append(details, "keyword '" + spec.keyword + "' not found in the body");
  }
  if (!spec.keyword_absent.empty() && body.find(spec.keyword_absent) != std::string_view::npos) {
    verdict.ok = false;
    append(details, "keyword '" + spec.keyword_absent + "' found in the body");
  }
  if (status_failed) verdict.cause = "HTTP " + std::to_string(status);
  if (!details.empty()) append(verdict.cause, details);
  // The answer's own word for what is wrong ("rank 5 (pid 41231) is gone while training at
  // step 812"), quoted as a body value.
  if (!verdict.ok) {
    if (const std::string reason = body_reason(body); !reason.empty())
      append(verdict.cause, "reason: " + mark_body_value(reason));
  }
  if (verdict.ok) verdict.cause.clear();
  return verdict;
}

}  // namespace trainwatch::checks
