#include "api/audience.h"

#include "auth/request_auth.h"

namespace trainwatch::api {

Audience audience_of(const auth::AdminAuth* admin, const http::Request& request) {
  if (admin == nullptr) return Audience::kAdmin;
  return auth::may_read_secrets(*admin, request.header("authorization"), request.header("cookie"))
             ? Audience::kAdmin
             : Audience::kPublic;
}

}  // namespace trainwatch::api
