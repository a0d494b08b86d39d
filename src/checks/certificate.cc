#include "checks/certificate.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

namespace trainwatch::checks {
namespace {

// Names kept from one certificate: enough to say whom it is for, bounded against a
// certificate that lists thousands.
constexpr size_t kMaxNamesKept = 16;

std::optional<CertificateDate> read_date(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return std::nullopt;
  return CertificateDate{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
}

std::string text_of(const ASN1_STRING* s) {
  const unsigned char* data = ASN1_STRING_get0_data(s);
  const int length = ASN1_STRING_length(s);
  return data != nullptr && length > 0 ? std::string(reinterpret_cast<const char*>(data), length) : "";
}

std::string ip_text(const ASN1_OCTET_STRING* ip) {
  const unsigned char* b = ASN1_STRING_get0_data(ip);
  if (b == nullptr) return "";
  if (ASN1_STRING_length(ip) == 4) {
    return std::to_string(b[0]) + "." + std::to_string(b[1]) + "." + std::to_string(b[2]) + "." +
           std::to_string(b[3]);
  }
  return "an IPv6 address";
}

void read_names(X509* certificate, std::vector<std::string>& out) {
  using Names = std::unique_ptr<GENERAL_NAMES, decltype(&GENERAL_NAMES_free)>;
  Names names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)),
      &GENERAL_NAMES_free);
  const int count = names ? sk_GENERAL_NAME_num(names.get()) : 0;
  for (int i = 0; i < count && out.size() < kMaxNamesKept; ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type == GEN_DNS) out.push_back(text_of(name->d.dNSName));
    if (name->type == GEN_IPADD) out.push_back(ip_text(name->d.iPAddress));
  }
  if (!out.empty()) return;
  // No subjectAltName: the subject's common name, as older certificates carry it.
  X509_NAME* subject = X509_get_subject_name(certificate);
  const int at = subject != nullptr ? X509_NAME_get_index_by_NID(subject, NID_commonName, -1) : -1;
  if (at >= 0) out.push_back(text_of(X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at))));
}

}  // namespace

LeafCertificate read_leaf_certificate(X509* certificate) {
  LeafCertificate leaf;
  leaf.not_before = read_date(X509_get0_notBefore(certificate));
  leaf.not_after = read_date(X509_get0_notAfter(certificate));
  read_names(certificate, leaf.names);
  return leaf;
}

ChainProblem chain_problem(long verify_result, std::string& detail) {
  switch (verify_result) {
    case X509_V_OK: return ChainProblem::kNone;
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: return ChainProblem::kSelfSigned;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE: return ChainProblem::kUntrusted;
    case X509_V_ERR_CERT_HAS_EXPIRED: return ChainProblem::kChainExpired;
    case X509_V_ERR_CERT_NOT_YET_VALID: return ChainProblem::kChainNotYetValid;
    default: detail = X509_verify_cert_error_string(verify_result); return ChainProblem::kOther;
  }
}

bool certificate_matches(X509* certificate, const std::string& name) {
  if (X509_check_ip_asc(certificate, name.c_str(), 0) == 1) return true;
  return X509_check_host(certificate, name.data(), name.size(), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS,
                         nullptr) == 1;
}

std::optional<double> peer_certificate_ms_left(SSL* ssl, SystemTime now) {
  using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;
  Certificate peer(SSL_get1_peer_certificate(ssl), &X509_free);
  if (!peer) return std::nullopt;
  const auto left = certificate_seconds_left(read_leaf_certificate(peer.get()), now);
  if (!left) return std::nullopt;
  return static_cast<double>(*left) * 1000.0;
}

}  // namespace trainwatch::checks
