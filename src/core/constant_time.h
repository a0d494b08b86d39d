// The one string compare for secrets (admin token digests, CSRF tokens, heartbeat ping
// tokens, the jobs bearer token). Pure; callable from any thread.
#pragma once

#include <string_view>

namespace trainwatch {

// True iff a and b hold the same bytes. Takes time that depends only on the lengths, so a
// timing attack learns nothing about how many leading bytes of a secret matched. The
// lengths themselves are not hidden: compare digests or fixed-length tokens where the
// length of the secret matters.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace trainwatch
