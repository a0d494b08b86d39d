#include "core/asio_timers.h"

#include <boost/asio/steady_timer.hpp>

namespace trainwatch {

namespace {

// asio's cancel() cannot recall a handler that has already been queued; the generation
// makes such a handler a no-op, which is what the Timer contract promises.
class AsioTimer final : public Timer {
 public:
  AsioTimer(boost::asio::io_context& io, const Clock& clock) : timer_(io), clock_(clock) {}

  void arm(MonoTime deadline, std::function<void()> on_due) override {
    const uint64_t generation = ++generation_;
    on_due_ = std::move(on_due);
    timer_.expires_after(deadline - clock_.monotonic_time());
    timer_.async_wait([this, generation](boost::system::error_code ec) {
      if (ec || generation != generation_) return;
      auto fn = std::move(on_due_);
      on_due_ = nullptr;
      fn();  // may re-arm this timer or destroy its owner; nothing of `this` is used after
    });
  }

  void cancel() override {
    ++generation_;
    on_due_ = nullptr;
    timer_.cancel();
  }

 private:
  boost::asio::steady_timer timer_;
  const Clock& clock_;
  uint64_t generation_ = 0;
  std::function<void()> on_due_;
};

}  // namespace

std::unique_ptr<Timer> AsioTimers::make_timer() { return std::make_unique<AsioTimer>(io_, clock_); }

}  // namespace trainwatch
