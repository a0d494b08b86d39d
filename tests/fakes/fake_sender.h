// FakeSender: an alerting::Sender that records every request and keeps it in flight
// until the test answers it, so a test decides how each target answers (accepted,
// 503, 429 with Retry-After, 400...) and when: a target the test leaves unanswered is a
// slow one. Answers run on the test's thread, as the Sender contract asks (never inline
// from send()).
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "alerting/sender.h"
#include "core/clock.h"

namespace trainwatch::testing {

class FakeSender final : public alerting::Sender {
 public:
  struct Sent {
    std::string url;
    std::string body;
    SystemTime at{};  // the clock's time when the request left
  };

  explicit FakeSender(const Clock& clock) : clock_(clock) {}

  void send(const alerting::OutboundRequest& request,
            std::function<void(alerting::SendOutcome)> done) override {
    sent_.push_back(Sent{request.url, request.body, clock_.system_time()});
    in_flight_.push_back(InFlight{request.url, std::move(done)});
  }

  static alerting::SendOutcome status(int http_status,
                                      std::optional<std::string> retry_after = std::nullopt) {
    alerting::SendOutcome o;
    o.transport_ok = true;
    o.status = http_status;
    o.retry_after = std::move(retry_after);
    if (http_status >= 300) o.error = "HTTP " + std::to_string(http_status);
    return o;
  }
  static alerting::SendOutcome accepted() { return status(200); }

  // Answers the oldest request in flight to `url`; false when none is.
  bool answer(const std::string& url, const alerting::SendOutcome& outcome) {
    for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it) {
      if (it->url != url) continue;
      auto done = std::move(it->done);
      in_flight_.erase(it);
      done(outcome);  // may send the next request
      return true;
    }
    return false;
  }
  // Answers every request in flight, and those their answers cause, with `outcome`.
  void answer_all(const alerting::SendOutcome& outcome) {
    while (!in_flight_.empty()) answer(in_flight_.front().url, outcome);
  }

  size_t in_flight(const std::string& url) const {
    size_t n = 0;
    for (const auto& f : in_flight_) n += f.url == url ? 1 : 0;
    return n;
  }
  // Every request sent, in order.
  const std::vector<Sent>& sent() const { return sent_; }

 private:
  struct InFlight {
    std::string url;
    std::function<void(alerting::SendOutcome)> done;
  };

  const Clock& clock_;
  std::vector<Sent> sent_;
  std::deque<InFlight> in_flight_;
};

}  // namespace trainwatch::testing
