#include "auth/guess_throttle.h"

namespace trainwatch::auth {

GuessThrottle::GuessThrottle(GuessLimits limits)
    : sources_(limits.per_source), credentials_(limits.per_credential) {}

std::optional<Millis> GuessThrottle::begin(std::string_view source, MonoTime now) {
  std::lock_guard lock(mu_);
  const double units = sources_.units(source, now);
  if (auto wait = sources_.wait_from(units)) return wait;
  sources_.set(source, units - 1, now);
  return std::nullopt;
}

void GuessThrottle::succeeded(std::string_view source, MonoTime now) {
  std::lock_guard lock(mu_);
  sources_.set(source, sources_.units(source, now) + 1, now);
}

void GuessThrottle::failed(std::string_view source, std::string_view credential, MonoTime now) {
  std::lock_guard lock(mu_);
  const double left = credentials_.units(credential, now);
  credentials_.set(credential, left - 1, now);
  // Under attack (nothing left before this failure): the source loses its whole allowance.
  if (left < 1) sources_.set(source, 0, now);
}

GuessThrottle::Stats GuessThrottle::stats() const {
  std::lock_guard lock(mu_);
  return {sources_.size(), credentials_.size(), sources_.evicted_draining(), credentials_.evicted_draining()};
}

}  // namespace trainwatch::auth
