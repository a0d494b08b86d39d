// AsioTimers: the TimerFactory of the running program. Each timer is an asio
// steady_timer on the io_context given; deadlines come from the injected Clock, so a
// deadline is "clock time + remaining", measured when armed.
// Threading: timers are armed, cancelled and fired on the io_context's thread.
#pragma once

#include <boost/asio/io_context.hpp>

#include "core/timer.h"

namespace trainwatch {

class AsioTimers final : public TimerFactory {
 public:
  AsioTimers(boost::asio::io_context& io, const Clock& clock) : io_(io), clock_(clock) {}
  std::unique_ptr<Timer> make_timer() override;

 private:
  boost::asio::io_context& io_;
  const Clock& clock_;
};

}  // namespace trainwatch
