// Reads what a TLS check needs from OpenSSL: the leaf certificate's dates and names, the
// chain verifier's result, and whether the certificate is for a given host name. The
// judgement of what was read is pure and lives in checks/tls_verdict.h.
#pragma once

#include <openssl/ossl_typ.h>

#include <optional>
#include <string>

#include "checks/tls_verdict.h"

namespace trainwatch::checks {

// The certificate's dates (nullopt where a field is missing or unreadable) and names.
LeafCertificate read_leaf_certificate(X509* certificate);

// The verifier's result (SSL_get_verify_result) as a ChainProblem; the verifier's own
// words go into `detail` for kOther.
ChainProblem chain_problem(long verify_result, std::string& detail);

// True when the certificate is for `name`: a DNS name (wildcards as browsers allow
// them) or an IP address literal.
bool certificate_matches(X509* certificate, const std::string& name);

// Validity the peer's leaf certificate has left on a live TLS connection, in
// milliseconds (negative once expired); nullopt without a certificate or usable dates.
std::optional<double> peer_certificate_ms_left(SSL* ssl, SystemTime now);

}  // namespace trainwatch::checks
