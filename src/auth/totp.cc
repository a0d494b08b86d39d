#include "auth/totp.h"

#include <array>
#include <cctype>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/constant_time.h"

namespace trainwatch::auth {

std::optional<std::string> decode_base32_secret(std::string_view base32) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : base32) {
    if (c == ' ' || c == '=' || c == '-') continue;
    const char u = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    int value;
    if (u >= 'A' && u <= 'Z') {
      value = u - 'A';
    } else if (u >= '2' && u <= '7') {
      value = u - '2' + 26;
    } else {
      return std::nullopt;
    }
    buffer = (buffer << 5) | static_cast<uint32_t>(value);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  if (out.size() < 10) return std::nullopt;
  return out;
}

std::string totp_code(std::string_view secret, int64_t step) {
  std::array<unsigned char, 8> counter{};
  for (int i = 7; i >= 0; --i) {
    counter[static_cast<size_t>(i)] = static_cast<unsigned char>(step & 0xff);
    step >>= 8;
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  if (HMAC(EVP_sha1(), secret.data(), static_cast<int>(secret.size()), counter.data(), counter.size(), mac,
           &mac_len) == nullptr ||
      mac_len < 20) {
    return {};
  }
  // RFC 4226 5.3: dynamic truncation.
  const unsigned offset = mac[mac_len - 1] & 0x0f;
  const uint32_t binary =
      (static_cast<uint32_t>(mac[offset] & 0x7f) << 24) | (static_cast<uint32_t>(mac[offset + 1]) << 16) |
      (static_cast<uint32_t>(mac[offset + 2]) << 8) | static_cast<uint32_t>(mac[offset + 3]);
  std::string code = std::to_string(binary % 1'000'000);
  return std::string(6 - code.size(), '0') + code;
}

int64_t totp_step(SystemTime now) {
  const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return seconds / kTotpStepSeconds;
}

std::optional<int64_t> matching_totp_step(std::string_view secret, std::string_view code, SystemTime now) {
  if (code.size() != 6) return std::nullopt;
  const int64_t step = totp_step(now);
  std::optional<int64_t> match;
  // Every candidate is compared, so the time taken does not say which one matched.
  for (int64_t s = step - 1; s <= step + 1; ++s) {
    if (constant_time_equal(totp_code(secret, s), code) && !match) match = s;
  }
  return match;
}

}  // namespace trainwatch::auth
