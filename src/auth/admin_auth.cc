#include "auth/admin_auth.h"

#include <algorithm>

#include <openssl/rand.h>

#include "auth/sha256.h"
#include "core/constant_time.h"

namespace trainwatch::auth {

std::string random_token() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    // Without entropy no session id is safe; refusing is better than guessable ids.
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

namespace {

std::vector<std::string> digests_of(const AuthConfig& config) {
  constexpr std::string_view kPrefix = "sha256:";
  std::vector<std::string> digests;
  digests.reserve(config.admin_tokens.size());
  for (const std::string& token : config.admin_tokens) {
    digests.push_back(token.rfind(kPrefix, 0) == 0 ? token.substr(kPrefix.size()) : auth::sha256_hex(token));
  }
  std::sort(digests.begin(), digests.end());
  digests.erase(std::unique(digests.begin(), digests.end()), digests.end());
  return digests;
}

}  // namespace

AdminAuth::AdminAuth(const AuthConfig& config, const Clock& clock)
    : clock_(clock), digests_(digests_of(config)), ttl_(config.session_ttl), gate_(clock) {}

bool AdminAuth::reconfigure(const AuthConfig& config) {
  std::vector<std::string> next = digests_of(config);
  std::lock_guard lock(mu_);
  ttl_ = config.session_ttl;
  if (next == digests_) return false;
  digests_ = std::move(next);
  sessions_.clear();
  return true;
}

bool AdminAuth::enabled() const {
  std::lock_guard lock(mu_);
  return !digests_.empty();
}

Millis AdminAuth::session_ttl() const {
  std::lock_guard lock(mu_);
  return ttl_;
}

bool AdminAuth::digest_known(const std::string& digest) const {
  bool found = false;
  // Every digest is compared, so the time taken does not say which one matched.
  for (const std::string& d : digests_) found = constant_time_equal(digest, d) || found;
  return found;
}

bool AdminAuth::token_valid(std::string_view token) const {
  if (token.empty()) return false;
  const std::string digest = auth::sha256_hex(token);
  std::lock_guard lock(mu_);
  return digest_known(digest);
}

std::optional<Session> AdminAuth::login(std::string_view token) {
  const std::string digest = auth::sha256_hex(token);
  Session s{random_token(), random_token(), {}};
  std::lock_guard lock(mu_);
  // Checked under the lock that inserts the session: a reload that drops this token
  // either comes first (refused here) or after (and drops this session too).
  if (token.empty() || !digest_known(digest)) return std::nullopt;
  if (s.id.empty() || s.csrf_token.empty()) return std::nullopt;
  const MonoTime now = clock_.monotonic_time();
  s.expires = now + ttl_;
  std::erase_if(sessions_, [&](const auto& entry) { return entry.second.expires <= now; });
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(), [](const auto& a, const auto& b) {
      return a.second.expires < b.second.expires;
    });
    sessions_.erase(oldest);
  }
  sessions_.emplace(s.id, s);
  return s;
}

void AdminAuth::logout(std::string_view session_id) {
  std::lock_guard lock(mu_);
  if (auto it = sessions_.find(session_id); it != sessions_.end()) sessions_.erase(it);
}

std::optional<Session> AdminAuth::session(std::string_view session_id) const {
  if (session_id.empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session_id);
  if (it == sessions_.end() || it->second.expires <= clock_.monotonic_time()) return std::nullopt;
  return it->second;
}

}  // namespace trainwatch::auth
