#include "checks/http_verdict.h"

namespace trainwatch::checks {
namespace {

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
  if (verdict.ok) verdict.cause.clear();
  return verdict;
}

}  // namespace trainwatch::checks
