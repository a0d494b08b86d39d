#include "catalog/heartbeat_tokens.h"

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "heartbeat/tokens.h"
#include "storage/store_errors.h"

namespace trainwatch::catalog {

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
    missing[i]->token = heartbeat::generate_token(random);
    auto promise = std::make_shared<std::promise<Status>>();
    saved.push_back(promise->get_future());
    if (!store.write(SaveToken{*names[i], missing[i]->token},
                     [promise](const Status& s) { promise->set_value(s); })) {
      return make_error(store_error::kUnavailable,
                        "cannot save the token of monitor '" + *names[i] + "': the store's queue is full");
    }
  }
  for (auto& f : saved) {
    if (Status s = f.get(); !s) return s;
  }
  if (saved.empty()) return Ok{};
  // Read back: a save keeps the token already stored, and a replica that started at the
  // same moment may have stored its own first. Every replica must hand out that one.
  stored = store.heartbeat_tokens();
  if (!stored) return stored.error();
  for (size_t i = 0; i < missing.size(); ++i) {
    auto it = stored->find(*names[i]);
    if (it == stored->end())
      return make_error(store_error::kRead,
                        "the token of monitor '" + *names[i] + "' was saved but cannot be read back");
    missing[i]->token = it->second;
  }
  return Ok{};
}

}  // namespace trainwatch::catalog
