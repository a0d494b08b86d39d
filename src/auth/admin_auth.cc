#include "auth/admin_auth.h"

#include <algorithm>

#include <openssl/rand.h>

#include "auth/sha256.h"

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

AdminAuth::AdminAuth(const AuthConfig& config, const Clock& clock) : clock_(clock), ttl_(config.session_ttl) {
  constexpr std::string_view kPrefix = "sha256:";
  for (const std::string& token : config.admin_tokens) {
    digests_.push_back(token.rfind(kPrefix, 0) == 0 ? token.substr(kPrefix.size()) : sha256_hex(token));
  }
}

bool AdminAuth::token_valid(std::string_view token) const {
  if (token.empty()) return false;
  const std::string digest = sha256_hex(token);
  bool found = false;
  // Every digest is compared, so the time taken does not say which one matched.
  for (const std::string& d : digests_) found = constant_time_equal(digest, d) || found;
  return found;
}

std::optional<Session> AdminAuth::login(std::string_view token) {
  if (!token_valid(token)) return std::nullopt;
  Session s{random_token(), random_token(), clock_.monotonic_time() + ttl_};
  if (s.id.empty() || s.csrf_token.empty()) return std::nullopt;
  std::lock_guard lock(mu_);
  const MonoTime now = clock_.monotonic_time();
  std::erase_if(sessions_, [&](const auto& entry) { return entry.second.expires <= now; });
  if (sessions_.size() >= kMaxSessions) {
    auto oldest = std::min_element(sessions_.begin(), sessions_.end(),
                                   [](const auto& a, const auto& b) { return a.second.expires < b.second.expires; });
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
