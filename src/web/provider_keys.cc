#include "web/provider_keys.h"

#include <chrono>

namespace trainwatch::web {

ProviderKeys::ProviderKeys(Read read, const Clock& clock)
    : read_(std::move(read)), clock_(clock), thread_([this] { run(); }) {}

ProviderKeys::~ProviderKeys() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProviderKeys::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || wanted_; });
    if (stopping_) return;
    wanted_ = false;
    reading_ = true;
    lock.unlock();
    Result<auth::KeySet> read = read_(kReadTimeout);
    lock.lock();
    reading_ = false;
    ++reads_done_;
    if (read) {
      keys_ = std::move(*read);
      last_error_.clear();
    } else {
      last_error_ = read.error().message;
    }
    done_.notify_all();
  }
}

bool ProviderKeys::has(const std::string& kid) const {
  return keys_ && (keys_->count(kid) != 0 || (kid.empty() && keys_->size() == 1));
}

Result<auth::KeySet> ProviderKeys::keys_for(const std::string& kid) {
  std::unique_lock lock(mu_);
  if (has(kid)) return *keys_;
  const MonoTime now = clock_.monotonic_time();
  if (!reading_ && !wanted_ && (!last_asked_ || now - *last_asked_ >= kRefetchInterval)) {
    last_asked_ = now;
    wanted_ = true;
    wake_.notify_one();
  }
  if (reading_ || wanted_) {
    const uint64_t before = reads_done_;
    done_.wait_for(lock, kWaitAtMost, [&] { return reads_done_ != before || stopping_; });
    if (reads_done_ == before) {
      return Error{"oidc.keys_unreachable", "the provider's keys did not come within " +
                                                std::to_string(kWaitAtMost.count() / 1000) + " s"};
    }
  }
  if (has(kid) || (keys_ && last_error_.empty())) return *keys_;
  return Error{"oidc.keys_unreachable",
               "cannot read the provider's keys: " +
                   (last_error_.empty() ? std::string("none read yet") : last_error_)};
}

}  // namespace trainwatch::web
