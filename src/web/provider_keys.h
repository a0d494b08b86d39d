// ProviderKeys: the single sign-on provider's signing keys (its JWKS), read on a thread of
// their own and never on a login's path. A login that has the key it needs goes on at
// once; one whose key is missing waits at most kWaitAtMost for a read, so a slow or dead
// key endpoint costs each login at most that, not the read's whole deadline, and the
// logins behind it in the SSO worker's queue no time at all once a read has failed.
//
// When the keys are read: once at start; then when a login names a key id they lack (the
// provider rotated its keys) or none could be read yet, at most once per
// kRefetchInterval, so forged key ids cannot make the server hammer the provider. Each
// read is given kReadTimeout. A failed read keeps the keys held before.
//
// Threading: keys_for() from any thread (the SSO worker's); the read runs on this
// object's thread, which waits on a condition variable with a real deadline (a thread
// that blocks by design: docs/architecture.md, "Time in tests"). The destructor stops it,
// abandoning a read in flight only after its own deadline.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "auth/id_token.h"
#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::web {

class ProviderKeys {
 public:
  static constexpr Millis kReadTimeout{5'000};
  static constexpr Millis kWaitAtMost{2'000};
  static constexpr Millis kRefetchInterval{10'000};

  // Reads the provider's JWKS once, within `timeout` (discovery and the keys); on this
  // object's thread.
  using Read = std::function<Result<auth::KeySet>(Millis timeout)>;

  ProviderKeys(Read read, const Clock& clock);
  ~ProviderKeys();
  ProviderKeys(const ProviderKeys&) = delete;
  ProviderKeys& operator=(const ProviderKeys&) = delete;

  // The keys to verify a token signed with `kid`: those held when they have it (or, for a
  // token without a kid, hold one key); else after a read, if one may start now, waited for
  // at most kWaitAtMost. Error "oidc.keys_unreachable" when none is held, or the key is
  // missing and the last read failed or did not finish in time: the provider cannot be
  // reached now (the login answers 502). Keys that still lack `kid` after a good read come
  // back as they are: the token then fails its check as signed by an unknown key (403).
  Result<auth::KeySet> keys_for(const std::string& kid);

 private:
  void run();
  bool has(const std::string& kid) const;  // call with mu_ held

  const Read read_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable wake_;  // the thread: a read is wanted, or stop
  std::condition_variable done_;  // logins: a read ended
  std::optional<auth::KeySet> keys_;
  std::string last_error_;  // of the last read; empty when it succeeded
  uint64_t reads_done_ = 0;
  bool wanted_ = true;  // the first read, at start
  bool reading_ = false;
  bool stopping_ = false;
  std::optional<MonoTime> last_asked_;  // when a login last started a read
  std::thread thread_;                  // last: starts once the rest exists
};

}  // namespace trainwatch::web
