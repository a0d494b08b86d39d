#include "auth/login_forms.h"

#include "auth/admin_auth.h"
#include "core/constant_time.h"

namespace trainwatch::auth {

std::optional<LoginForms::Form> LoginForms::open() {
  Form form{random_token(), random_token()};
  if (form.id.empty() || form.csrf_token.empty()) return std::nullopt;
  csrf_by_id_.put(form.id, form.csrf_token);
  return form;
}

bool LoginForms::redeem(std::string_view id, std::string_view csrf) {
  if (id.empty()) return false;
  const auto kept = csrf_by_id_.take(id);
  return kept && !csrf.empty() && constant_time_equal(csrf, *kept);
}

size_t LoginForms::size() const { return csrf_by_id_.size(); }

}  // namespace trainwatch::auth
