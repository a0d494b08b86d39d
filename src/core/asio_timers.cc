#include "core/asio_timers.h"

#include <memory>

#include <boost/asio/steady_timer.hpp>

namespace trainwatch {

namespace {

// asio's cancel() cannot recall a handler that has already been queued, and destroying
// the steady_timer does not either: such a handler still runs, with success. So the
// handler reaches the callback only through a weak_ptr that cancel(), a re-arm and the
// destructor let go of; it touches `this` only after that lock proved the timer alive.
class AsioTimer final : public Timer {
 public:
  AsioTimer(boost::asio::io_context& io, const Clock& clock) : timer_(io), clock_(clock) {}

  void arm(MonoTime deadline, std::function<void()> on_due) override {
    on_due_ = std::make_shared<std::function<void()>>(std::move(on_due));
    timer_.expires_after(deadline - clock_.monotonic_time());
    timer_.async_wait([this, armed = std::weak_ptr(on_due_)](boost::system::error_code ec) {
      if (ec) return;
      std::shared_ptr<std::function<void()>> fn = armed.lock();
      if (!fn) return;
      on_due_.reset();
      (*fn)();  // may re-arm this timer or destroy its owner; nothing of `this` is used after
    });
  }

  void cancel() override {
    on_due_.reset();
    timer_.cancel();
  }

 private:
  boost::asio::steady_timer timer_;
  const Clock& clock_;
  std::shared_ptr<std::function<void()>> on_due_;  // the armed callback; its only owner
};

}  // namespace

std::unique_ptr<Timer> AsioTimers::make_timer() { return std::make_unique<AsioTimer>(io_, clock_); }

}  // namespace trainwatch
