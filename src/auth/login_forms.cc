#include "auth/login_forms.h"

#include "auth/admin_auth.h"
#include "core/constant_time.h"

namespace trainwatch::auth {

std::optional<LoginForms::Form> LoginForms::open() {
  Form form{random_token(), random_token()};
  if (form.id.empty() || form.csrf_token.empty()) return std::nullopt;
  const MonoTime now = clock_.monotonic_time();
  std::lock_guard lock(mu_);
  drop_expired(now);
  if (forms_.size() >= kMaxForms) {
    forms_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
  oldest_first_.push_back(form.id);
  forms_.emplace(form.id, Entry{form.csrf_token, now + kFormTtl, std::prev(oldest_first_.end())});
  return form;
}

bool LoginForms::redeem(std::string_view id, std::string_view csrf) {
  if (id.empty()) return false;
  std::lock_guard lock(mu_);
  drop_expired(clock_.monotonic_time());
  auto it = forms_.find(id);
  if (it == forms_.end()) return false;
  const bool matches = !csrf.empty() && constant_time_equal(csrf, it->second.csrf_token);
  oldest_first_.erase(it->second.age);
  forms_.erase(it);
  return matches;
}

size_t LoginForms::size() const {
  std::lock_guard lock(mu_);
  return forms_.size();
}

void LoginForms::drop_expired(MonoTime now) {
  while (!oldest_first_.empty()) {
    auto it = forms_.find(oldest_first_.front());
    if (it->second.expires > now) break;
    forms_.erase(it);
    oldest_first_.pop_front();
  }
}

}  // namespace trainwatch::auth
