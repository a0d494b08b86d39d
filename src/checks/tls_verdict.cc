#include "checks/tls_verdict.h"

#include <cstdio>

namespace trainwatch::checks {
namespace {

constexpr int64_t kMinute = 60;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
// RFC 5280 4.1.2.5: notAfter 99991231235959Z means "no well-defined expiration date".
constexpr int kNoExpiryYear = 9999;
// Names quoted in a mismatch message; a certificate for hundreds of names is cut here.
constexpr size_t kMaxNamesShown = 3;

// Days from 1970-01-01 to a proleptic Gregorian date: the civil-days algorithm, exact for
// any year and free of time_t, timegm and the locale.
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t year_of_era = y - era * 400;
  const int64_t day_of_year = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146'097 + day_of_era - 719'468;
}

std::string plural(int64_t n, const char* unit) {
  return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
}

std::string names_of(const LeafCertificate& leaf) {
  if (leaf.names.empty()) return "no host name";
  std::string out;
  for (size_t i = 0; i < leaf.names.size() && i < kMaxNamesShown; ++i) {
    if (i > 0) out += ", ";
    out += leaf.names[i];
  }
  if (leaf.names.size() > kMaxNamesShown)
    out += " and " + std::to_string(leaf.names.size() - kMaxNamesShown) + " more";
  return out;
}

std::string chain_cause(const TlsFindings& found) {
  switch (found.chain) {
    case ChainProblem::kNone: break;
    case ChainProblem::kSelfSigned: return "self-signed certificate";
    case ChainProblem::kUntrusted:
      return "untrusted certificate: its issuer is not among the trusted CAs (system store or ca_file)";
    case ChainProblem::kChainExpired: return "a certificate in the chain has expired";
    case ChainProblem::kChainNotYetValid: return "a certificate in the chain is not valid yet";
    case ChainProblem::kOther:
      return "certificate verification failed" +
             (found.chain_detail.empty() ? "" : ": " + found.chain_detail);
  }
  return "";
}

int64_t now_seconds(SystemTime now) {
  return std::chrono::floor<std::chrono::seconds>(now.time_since_epoch()).count();
}

}  // namespace

int64_t seconds_since_epoch(const CertificateDate& date) {
  return days_from_civil(date.year, date.month, date.day) * kDay + date.hour * kHour + date.minute * kMinute +
         date.second;
}

std::string format_certificate_date(const CertificateDate& date) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02dZ", date.year, date.month, date.day,
                date.hour, date.minute, date.second);
  return buffer;
}

std::optional<int64_t> certificate_seconds_left(const LeafCertificate& leaf, SystemTime now) {
  if (!leaf.not_after) return std::nullopt;
  const int64_t not_after = seconds_since_epoch(*leaf.not_after);
  if (leaf.not_before && not_after < seconds_since_epoch(*leaf.not_before)) return std::nullopt;
  return not_after - now_seconds(now);
}

std::string describe_time_left(int64_t seconds) {
  if (seconds >= kDay) return plural(seconds / kDay, "day");
  if (seconds >= kHour) return plural(seconds / kHour, "hour");
  if (seconds >= kMinute) return plural(seconds / kMinute, "minute");
  return "less than a minute";
}

TlsVerdict judge_tls(const TlsFindings& found, const TlsThresholds& thresholds, SystemTime now) {
  TlsVerdict v;
  auto down = [&v](std::string cause) {
    v.ok = false;
    v.cause = std::move(cause);
    return v;
  };
  if (!found.leaf) return down("the server sent no certificate");
  const LeafCertificate& leaf = *found.leaf;
  if (!leaf.not_after) return down("certificate has no readable expiry date (notAfter)");
  const std::string not_after = format_certificate_date(*leaf.not_after);
  v.seconds_left = certificate_seconds_left(leaf, now);
  if (!v.seconds_left) {
    return down("certificate dates are inverted: notAfter " + not_after + " is before notBefore " +
                format_certificate_date(*leaf.not_before));
  }
  const int64_t left = *v.seconds_left;
  if (left <= 0)
    return down("certificate has expired (" + not_after + ", " + describe_time_left(-left) + " ago)");
  if (leaf.not_before && seconds_since_epoch(*leaf.not_before) > now_seconds(now)) {
    const int64_t until = seconds_since_epoch(*leaf.not_before) - now_seconds(now);
    return down("certificate is not valid before " + format_certificate_date(*leaf.not_before) + " (in " +
                describe_time_left(until) + ")");
  }
  if (found.chain != ChainProblem::kNone) return down(chain_cause(found));
  if (!found.name_matches) return down("host name mismatch: certificate is for " + names_of(leaf));

  const std::string subject = "certificate for " + found.checked_name;
  if (leaf.not_after->year >= kNoExpiryYear) {
    v.ok = true;
    v.cause = subject + " has no expiry date (notAfter " + not_after + ")";
    return v;
  }
  v.cause = subject + " expires in " + describe_time_left(left) + " (" + not_after + ")";
  const auto below = [left](Millis threshold) { return left * 1000 < threshold.count(); };
  v.ok = !below(thresholds.down_before);
  v.warning = v.ok && below(thresholds.warn_before);
  return v;
}

}  // namespace trainwatch::checks
