// Judges what one TLS handshake found: the leaf certificate's dates, the chain's trust,
// the host name, and the days left against a tls monitor's warn_before and down_before.
// Pure: no OpenSSL and no clock here (checks/certificate.h reads the certificate), so the
// date math, the wording and every threshold are unit-tested directly.
//
// Example: a certificate for localhost valid until 2026-12-02T10:00:00Z, checked at
// 2026-11-30T09:00:00Z with down_before 3d: DOWN, "certificate for localhost expires in 2
// days (2026-12-02T10:00:00Z)". With down_before 1d and warn_before 14d: UP, the same
// words, and `warning` set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace trainwatch::checks {

// A date as a certificate states it (UTC, to the second). Certificates may state any year
// from 0 to 9999, beyond what SystemTime holds, so dates stay in this form and the math
// is done in seconds.
struct CertificateDate {
  int year = 1970;
  int month = 1;  // 1-12
  int day = 1;    // 1-31
  int hour = 0;
  int minute = 0;
  int second = 0;
};

// Seconds since 1970-01-01T00:00:00Z (negative before it), for any year 0-9999.
int64_t seconds_since_epoch(const CertificateDate& date);
// "2026-12-02T10:00:00Z".
std::string format_certificate_date(const CertificateDate& date);

// What the handshake's chain verification said, in the few kinds a person acts on.
enum class ChainProblem {
  kNone,
  kSelfSigned,    // the leaf, or the chain's root, signed itself and is not trusted
  kUntrusted,     // no trusted issuer found (a private CA not in the store or ca_file)
  kChainExpired,  // a certificate of the chain (not the leaf: its dates are judged here) expired
  kChainNotYetValid,
  kOther,  // the verifier's own words are in TlsFindings::chain_detail
};

// The server's leaf certificate as read. Dates are nullopt when the field is missing or
// cannot be read.
struct LeafCertificate {
  std::optional<CertificateDate> not_before;
  std::optional<CertificateDate> not_after;
  std::vector<std::string> names;  // subjectAltName DNS and IP names, else the subject's CN
};

struct TlsFindings {
  std::string checked_name;             // the name the certificate must match (server_name or host)
  std::optional<LeafCertificate> leaf;  // nullopt: the server sent no certificate
  ChainProblem chain = ChainProblem::kNone;
  std::string chain_detail;  // the verifier's words for kOther
  bool name_matches = true;
};

struct TlsThresholds {
  Millis warn_before{0};
  Millis down_before{0};
};

struct TlsVerdict {
  bool ok = false;
  bool warning = false;  // ok, but within warn_before: notify once, never page
  std::string cause;     // always set: what was found, also when ok
  // Validity the leaf has left (negative once expired); nullopt when its dates are unusable.
  std::optional<int64_t> seconds_left;
};

// Seconds the leaf has left at `now`; nullopt when the dates cannot be used (missing
// notAfter, or notAfter before notBefore).
std::optional<int64_t> certificate_seconds_left(const LeafCertificate& leaf, SystemTime now);

// "2 days", "1 day", "5 hours", "1 hour", "12 minutes", "less than a minute".
std::string describe_time_left(int64_t seconds);

TlsVerdict judge_tls(const TlsFindings& found, const TlsThresholds& thresholds, SystemTime now);

}  // namespace trainwatch::checks
