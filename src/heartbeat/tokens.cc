#include "heartbeat/tokens.h"

#include <array>
#include <future>
#include <memory>
#include <vector>

namespace trainwatch::heartbeat {

std::string generate_token(Random& random) {
  std::array<uint8_t, 16> bytes{};
  random.fill(bytes);
  bytes[6] = static_cast<uint8_t>((bytes[6] & 0x0F) | 0x40);  // version 4
  bytes[8] = static_cast<uint8_t>((bytes[8] & 0x3F) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0x0F];
  }
  return out;
}

Status resolve_tokens(Config& config, Store& store, Random& random) {
  std::vector<HeartbeatSpec*> missing;
  std::vector<const std::string*> names;
  for (auto& m : config.monitors) {
    auto* spec = std::get_if<HeartbeatSpec>(&m.spec);
    if (spec != nullptr && spec->token.empty()) {
      missing.push_back(spec);
      names.push_back(&m.name);
    }
  }
  if (missing.empty()) return Ok{};
  auto stored = store.heartbeat_tokens();
  if (!stored) return stored.error();

  std::vector<std::future<Status>> saved;
  for (size_t i = 0; i < missing.size(); ++i) {
    if (auto it = stored->find(*names[i]); it != stored->end()) {
      missing[i]->token = it->second;
      continue;
    }
    missing[i]->token = generate_token(random);
    auto promise = std::make_shared<std::promise<Status>>();
    saved.push_back(promise->get_future());
    if (!store.write(SaveToken{*names[i], missing[i]->token},
                     [promise](const Status& s) { promise->set_value(s); })) {
      return make_error("store.full",
                        "cannot save the token of monitor '" + *names[i] + "': the store's queue is full");
    }
  }
  for (auto& f : saved) {
    if (Status s = f.get(); !s) return s;
  }
  return Ok{};
}

}  // namespace trainwatch::heartbeat
