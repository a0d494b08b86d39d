#include "heartbeat/ingest.h"

namespace trainwatch::heartbeat {

PingIngest::PingIngest(const Clock& clock, PingSink& sink)
    : clock_(clock), sink_(sink), index_(std::make_shared<TokenIndex>(Config{}, clock.monotonic_time())) {}

void PingIngest::configure(const Config& config) {
  auto next = std::make_shared<const TokenIndex>(config, clock_.monotonic_time());
  std::lock_guard lock(mu_);
  index_ = std::move(next);
}

std::shared_ptr<const TokenIndex> PingIngest::index() const {
  std::lock_guard lock(mu_);
  return index_;
}

void PingIngest::ingest(const PingRequest& request, PingDone done) {
  const std::shared_ptr<const TokenIndex> snapshot = index();
  TokenEntry* entry = snapshot->find(request.token);
  if (entry == nullptr) return done(PingOutcome::kUnknownToken);
  if (!entry->limiter.allow(clock_.monotonic_time())) return done(PingOutcome::kRateLimited);

  Ping ping;
  ping.kind = request.action.kind;
  ping.exit_code = request.action.exit_code;
  ping.at = clock_.system_time();
  ping.source = request.source;
  // A header may carry any byte; what is kept is UTF-8, as a PostgreSQL text column needs.
  ping.user_agent = keep_body(request.user_agent, kMaxUserAgentBytes).text;
  KeptBody body = keep_body(request.body, entry->body_limit);
  ping.body = std::move(body.text);
  ping.body_truncated = body.truncated;
  // The sink copies the monitor's name before this returns, so a reload that drops
  // `index` meanwhile cannot pull it away.
  // `snapshot` keeps `entry` alive until then.
  sink_.record_ping(entry->monitor, std::move(ping), [done = std::move(done)](const Status& status) {
    done(status ? PingOutcome::kAccepted : PingOutcome::kUnavailable);
  });
}

}  // namespace trainwatch::heartbeat
