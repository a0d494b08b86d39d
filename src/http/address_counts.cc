#include "http/address_counts.h"

namespace trainwatch::http {

bool AddressCounts::try_add(const std::string& address) {
  std::lock_guard lock(mu_);
  size_t& open = open_[address];
  if (open >= cap_) {
    if (open == 0) open_.erase(address);  // cap 0: nothing was there before
    return false;
  }
  ++open;
  return true;
}

void AddressCounts::remove(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = open_.find(address);
  if (it == open_.end()) return;
  if (--it->second == 0) open_.erase(it);
}

}  // namespace trainwatch::http
