#include "storage/retention.h"

namespace trainwatch {

RetentionPruner::RetentionPruner(boost::asio::io_context& io, const Clock& clock, Store& store, Millis keep_raw)
    : timer_(io), clock_(clock), store_(store), keep_raw_(keep_raw) {}

void RetentionPruner::start() {
  stopped_ = false;
  arm();
}

void RetentionPruner::stop() {
  stopped_ = true;
  timer_.cancel();
}

void RetentionPruner::arm() {
  timer_.expires_after(kPruneInterval);
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec || stopped_) return;
    // A refused write (full queue) is fine to drop: the next tick covers the same rows.
    (void)store_.write(PruneResults{clock_.system_time() - keep_raw_, kRowsPerPrune});
    arm();
  });
}

}  // namespace trainwatch
