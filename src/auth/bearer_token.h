// The one reader of `Authorization: Bearer <token>` (RFC 6750 §2.1), for every route that
// takes a token there: the API's writes and reads, the pages' reads and the agents' node
// reports. One reader, so that what counts as "a bearer token was presented" (and so goes
// through the guess throttle, auth/credential_gate.h) cannot differ between routes: the
// scheme in any case (RFC 9110 §11.1), then one or more spaces, then the token.
#pragma once

#include <optional>
#include <string_view>

namespace trainwatch::auth {

// The token, possibly empty ("Bearer " and nothing after it is a wrong token, not none);
// nullopt when the header is absent or names another scheme.
std::optional<std::string_view> bearer_token(std::string_view authorization);

}  // namespace trainwatch::auth
