// The pure half of the TLS check: date math, wording and the warn/down thresholds.
#include "checks/tls_verdict.h"

#include <gtest/gtest.h>

namespace trainwatch::checks {
namespace {

using std::chrono::hours;

constexpr Millis kDay{86'400'000};

// 2026-11-30T09:00:00Z.
SystemTime now() { return SystemTime(std::chrono::seconds(seconds_since_epoch({2026, 11, 30, 9, 0, 0}))); }

TlsFindings valid_until(CertificateDate not_after) {
  TlsFindings found;
  found.checked_name = "localhost";
  found.leaf = LeafCertificate{CertificateDate{2026, 1, 1}, not_after, {"localhost"}};
  return found;
}

TEST(CertificateDates, CountSecondsFromTheEpochForAnyYear) {
  EXPECT_EQ(seconds_since_epoch({1970, 1, 1, 0, 0, 0}), 0);
  EXPECT_EQ(seconds_since_epoch({2000, 3, 1, 0, 0, 0}), 951'868'800);  // after a leap day
  EXPECT_EQ(seconds_since_epoch({1969, 12, 31, 23, 59, 59}), -1);
  EXPECT_EQ(seconds_since_epoch({9999, 12, 31, 23, 59, 59}), 253'402'300'799);  // beyond SystemTime
  EXPECT_EQ(format_certificate_date({2026, 12, 2, 10, 0, 0}), "2026-12-02T10:00:00Z");
}

TEST(CertificateDates, TimeLeftIsSaidInItsLargestWholeUnit) {
  EXPECT_EQ(describe_time_left(2 * 86'400 + 3'600), "2 days");
  EXPECT_EQ(describe_time_left(86'400), "1 day");
  EXPECT_EQ(describe_time_left(5 * 3'600 + 59), "5 hours");
  EXPECT_EQ(describe_time_left(60), "1 minute");
  EXPECT_EQ(describe_time_left(59), "less than a minute");
}

TEST(JudgeTls, FarFromExpiryIsUpWithTheDateSaid) {
  const auto v = judge_tls(valid_until({2027, 6, 1, 0, 0, 0}), {14 * kDay, 3 * kDay}, now());
  EXPECT_TRUE(v.ok);
  EXPECT_FALSE(v.warning);
  EXPECT_EQ(v.cause, "certificate for localhost expires in 182 days (2027-06-01T00:00:00Z)");
}

TEST(JudgeTls, WithinWarnBeforeIsUpWithAWarning) {
  const auto v = judge_tls(valid_until({2026, 12, 2, 10, 0, 0}), {14 * kDay, 1 * kDay}, now());
  EXPECT_TRUE(v.ok);
  EXPECT_TRUE(v.warning);
  EXPECT_EQ(v.cause, "certificate for localhost expires in 2 days (2026-12-02T10:00:00Z)");
  EXPECT_EQ(v.seconds_left, 2 * 86'400 + 3'600);
}

TEST(JudgeTls, WithinDownBeforeIsDown) {
  const auto v = judge_tls(valid_until({2026, 12, 2, 10, 0, 0}), {14 * kDay, 3 * kDay}, now());
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.cause, "certificate for localhost expires in 2 days (2026-12-02T10:00:00Z)");
}

TEST(JudgeTls, ThresholdsAreExclusiveAtTheirEdge) {
  // Exactly 3 days left with down_before 3d: not less than it, so up.
  const auto v = judge_tls(valid_until({2026, 12, 3, 9, 0, 0}), {3 * kDay, 3 * kDay}, now());
  EXPECT_TRUE(v.ok);
  EXPECT_FALSE(v.warning);
}

TEST(JudgeTls, ExpiredIsDownWhateverElseIsWrong) {
  auto found = valid_until({2026, 11, 27, 9, 0, 0});
  found.chain = ChainProblem::kSelfSigned;
  const auto v = judge_tls(found, {}, now());
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.cause, "certificate has expired (2026-11-27T09:00:00Z, 3 days ago)");
  EXPECT_EQ(v.seconds_left, -3 * 86'400);
}

TEST(JudgeTls, NotValidYetIsDown) {
  auto found = valid_until({2027, 1, 1, 0, 0, 0});
  found.leaf->not_before = CertificateDate{2026, 12, 1, 9, 0, 0};
  EXPECT_EQ(judge_tls(found, {}, now()).cause,
            "certificate is not valid before 2026-12-01T09:00:00Z (in 1 day)");
}

TEST(JudgeTls, ChainProblemsAreNamed) {
  auto found = valid_until({2027, 6, 1, 0, 0, 0});
  found.chain = ChainProblem::kSelfSigned;
  EXPECT_EQ(judge_tls(found, {}, now()).cause, "self-signed certificate");
  found.chain = ChainProblem::kUntrusted;
  EXPECT_EQ(judge_tls(found, {}, now()).cause,
            "untrusted certificate: its issuer is not among the trusted CAs (system store or ca_file)");
  found.chain = ChainProblem::kOther;
  found.chain_detail = "certificate signature failure";
  const auto v = judge_tls(found, {}, now());
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.cause, "certificate verification failed: certificate signature failure");
}

TEST(JudgeTls, HostNameMismatchSaysWhomTheCertificateIsFor) {
  auto found = valid_until({2027, 6, 1, 0, 0, 0});
  found.name_matches = false;
  found.leaf->names = {"other.test"};
  EXPECT_EQ(judge_tls(found, {}, now()).cause, "host name mismatch: certificate is for other.test");
  found.leaf->names = {"a.test", "b.test", "c.test", "d.test", "e.test"};
  EXPECT_EQ(judge_tls(found, {}, now()).cause,
            "host name mismatch: certificate is for a.test, b.test, c.test and 2 more");
}

TEST(JudgeTls, UnusableDatesAreACauseNotACrash) {
  TlsFindings none;
  EXPECT_EQ(judge_tls(none, {}, now()).cause, "the server sent no certificate");

  auto missing = valid_until({2027, 1, 1});
  missing.leaf->not_after.reset();
  const auto m = judge_tls(missing, {}, now());
  EXPECT_FALSE(m.ok);
  EXPECT_EQ(m.cause, "certificate has no readable expiry date (notAfter)");
  EXPECT_FALSE(m.seconds_left);

  auto inverted = valid_until({2025, 1, 1, 0, 0, 0});
  inverted.leaf->not_before = CertificateDate{2026, 1, 1, 0, 0, 0};
  const auto i = judge_tls(inverted, {}, now());
  EXPECT_FALSE(i.ok);
  EXPECT_EQ(
      i.cause,
      "certificate dates are inverted: notAfter 2025-01-01T00:00:00Z is before notBefore 2026-01-01T00:00:00Z");
}

TEST(JudgeTls, YearNineThousandNineHundredNinetyNineMeansNoExpiry) {
  const auto v = judge_tls(valid_until({9999, 12, 31, 23, 59, 59}), {14 * kDay, 3 * kDay}, now());
  EXPECT_TRUE(v.ok);
  EXPECT_FALSE(v.warning);
  EXPECT_EQ(v.cause, "certificate for localhost has no expiry date (notAfter 9999-12-31T23:59:59Z)");
}

}  // namespace
}  // namespace trainwatch::checks
