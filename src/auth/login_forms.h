// LoginForms: the pre-login sessions behind the login page. GET /login opens one: a
// random id, sent as a cookie, and a random CSRF token, put in the form; both are kept
// here. POST /login must bring back an id this server handed out together with that id's
// token, and each form is good for one post.
//
// Why on the server: a double-submit cookie alone (form token == cookie) is defeated by
// anyone who can set cookies for this host, and every other port of the host can (login
// CSRF: the victim's browser is logged in with the attacker's token, and what the victim
// then types lands in the attacker's view). An id must now come from this server, and a
// form post from another origin is refused before it is looked at
// (auth/request_origin.h).
//
// Bounds: at most kMaxForms open forms, each for kFormTtl. Opening one more drops the
// oldest: that person's post answers 403 "reload the login page", and the reload works.
//
// Threading: every call is safe from any thread (one mutex).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "auth/one_shot_table.h"
#include "core/clock.h"

namespace trainwatch::auth {

class LoginForms {
 public:
  static constexpr size_t kMaxForms = 10'000;
  static constexpr Millis kFormTtl{3'600'000};

  struct Form {
    std::string id;          // the cookie's value
    std::string csrf_token;  // the form's hidden field
  };

  explicit LoginForms(const Clock& clock) : csrf_by_id_(clock, kMaxForms, kFormTtl) {}

  // A new open form; nullopt when the OS has no randomness to give.
  std::optional<Form> open();
  // True when `id` names an open, unexpired form whose token is `csrf`; that form is then
  // closed, whatever the token: one form, one post.
  bool redeem(std::string_view id, std::string_view csrf);

  size_t size() const;

 private:
  OneShotTable<std::string> csrf_by_id_;
};

}  // namespace trainwatch::auth
