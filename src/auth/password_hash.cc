#include "auth/password_hash.h"

#include <condition_variable>
#include <mutex>

#include <sodium.h>

namespace trainwatch::auth {
namespace {

bool sodium_ready() {
  static const bool kReady = sodium_init() >= 0;
  return kReady;
}

// Bounds the memory verifications take at once (password_hash.h).
class VerificationSlots {
 public:
  void acquire() {
    std::unique_lock lock(mu_);
    free_.wait(lock, [&] { return in_use_ < kMaxConcurrentVerifications; });
    ++in_use_;
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      --in_use_;
    }
    free_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable free_;
  int in_use_ = 0;
};

VerificationSlots& slots() {
  static VerificationSlots s;
  return s;
}

}  // namespace

std::string hash_password(std::string_view password) {
  if (!sodium_ready()) return {};
  char out[crypto_pwhash_STRBYTES];
  slots().acquire();
  const int rc = crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                                   crypto_pwhash_MEMLIMIT_INTERACTIVE);
  slots().release();
  return rc == 0 ? std::string(out) : std::string();
}

bool looks_like_password_hash(std::string_view text) {
  return text.size() < crypto_pwhash_STRBYTES &&
         (text.rfind("$argon2id$", 0) == 0 || text.rfind("$argon2i$", 0) == 0);
}

bool verify_password(std::string_view hash, std::string_view password) {
  if (!sodium_ready() || !looks_like_password_hash(hash)) return false;
  const std::string terminated(hash);  // crypto_pwhash_str_verify reads a C string
  slots().acquire();
  const int rc = crypto_pwhash_str_verify(terminated.c_str(), password.data(), password.size());
  slots().release();
  return rc == 0;
}

}  // namespace trainwatch::auth
