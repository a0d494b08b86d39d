#include "catalog/alert_links.h"

#include <array>
#include <cstdint>
#include <future>
#include <memory>

#include "storage/store_errors.h"

namespace trainwatch::catalog {
namespace {

constexpr char kKeyName[] = "alert_links";

std::string random_key(Random& random) {
  std::array<uint8_t, 32> bytes{};
  random.fill(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

Error used_error() {
  return make_error("link.used", "this link was used already: each alert's link snoozes once");
}

}  // namespace

Result<std::string> resolve_alert_link_key(Store& store, Random& random, SystemTime now) {
  auto stored = store.shared_key(kKeyName);
  if (!stored) return stored.error();
  if (*stored) return **stored;
  auto promise = std::make_shared<std::promise<Status>>();
  auto saved = promise->get_future();
  if (!store.write(SaveSharedKey{kKeyName, random_key(random), now},
                   [promise](const Status& s) { promise->set_value(s); })) {
    return make_error(store_error::kUnavailable,
                      "cannot save the alert links' key: the store's queue is full");
  }
  if (Status s = saved.get(); !s) return s.error();
  // Read back: a replica that started at the same moment may have saved its key first.
  stored = store.shared_key(kKeyName);
  if (!stored) return stored.error();
  if (!*stored)
    return make_error(store_error::kRead, "the alert links' key was saved but cannot be read back");
  return **stored;
}

Result<auth::AlertLink> AlertLinks::read(std::string_view token) const {
  return auth::read_alert_link(key_, token, clock_.system_time());
}

Status AlertLinks::unused(std::string_view token) const {
  auto used = store_.alert_link_used(std::string(token));
  if (!used) return used.error();
  if (*used) return used_error();
  return Ok{};
}

void AlertLinks::snooze(std::string_view token, Millis length, const Done& done) {
  auto link = read(token);
  if (!link) return done(link.error());
  if (length < MonitorSnoozes::kShortest || length > MonitorSnoozes::kLongest)
    return done(make_error("snooze.invalid", "expected a length from 1m to 7d"));
  const std::string monitor = link->monitor;
  const bool queued = store_.write(UseAlertLink{std::string(token), link->expires, clock_.system_time()},
                                   [this, monitor, length, done](const Status& spent) {
                                     if (!spent && spent.error().code == store_error::kExists)
                                       return done(used_error());
                                     if (!spent) return done(spent.error());
                                     snoozes_.snooze(monitor, length, done);
                                   });
  if (!queued) done(make_error(store_error::kUnavailable, "the store's queue is full; try again"));
}

}  // namespace trainwatch::catalog
