// FakeStore: a Store that keeps every write waiting until the test answers it, so a test
// decides when (and whether) each write commits. Reads answer empty.
#pragma once

#include <deque>
#include <mutex>

#include "storage/store.h"

namespace trainwatch::testing {

class FakeStore final : public Store {
 public:
  struct Write {
    WriteOp op;
    WriteDone done;
  };

  bool write(WriteOp op, WriteDone done = {}) override {
    std::lock_guard lock(mu_);
    writes_.push_back(Write{std::move(op), std::move(done)});
    return true;
  }
  void flush() override {}
  WriteHealth write_health() const override { return {}; }

  // Answers the oldest unanswered write with `status`; false when none waits.
  bool answer(const Status& status) {
    Write w;
    {
      std::lock_guard lock(mu_);
      if (writes_.empty()) return false;
      w = std::move(writes_.front());
      writes_.pop_front();
    }
    if (w.done) w.done(status);
    return true;
  }
  size_t waiting() const {
    std::lock_guard lock(mu_);
    return writes_.size();
  }
  // The oldest unanswered write, if it is a T.
  template <typename T>
  const T* front() const {
    std::lock_guard lock(mu_);
    return writes_.empty() ? nullptr : std::get_if<T>(&writes_.front().op);
  }

  Result<std::vector<StoredState>> load_states() override { return std::vector<StoredState>{}; }
  Result<std::vector<Incident>> incidents(const IncidentQuery&) override { return std::vector<Incident>{}; }
  Result<std::optional<Incident>> incident(int64_t) override { return std::optional<Incident>{}; }
  Result<std::vector<CheckResult>> results(const ResultQuery&) override { return std::vector<CheckResult>{}; }
  Result<std::vector<PingRecord>> pings(const PingQuery&) override { return std::vector<PingRecord>{}; }
  Result<HeartbeatMarks> heartbeat_marks(const std::string&) override { return HeartbeatMarks{}; }
  Result<std::map<std::string, std::string>> heartbeat_tokens() override {
    return std::map<std::string, std::string>{};
  }
  Result<std::vector<UptimeBucket>> uptime(const UptimeQuery&) override { return std::vector<UptimeBucket>{}; }
  Result<std::map<std::string, std::vector<UptimeBucket>>> uptime_of(const std::vector<std::string>&,
                                                                      const UptimeQuery&) override {
    return std::map<std::string, std::vector<UptimeBucket>>{};
  }
  Result<std::vector<ApiMonitorSpec>> api_monitors() override { return std::vector<ApiMonitorSpec>{}; }
  Result<std::vector<ApiWindowSpec>> api_windows() override { return std::vector<ApiWindowSpec>{}; }
  Result<int64_t> next_api_window_id() override { return int64_t{1}; }
  Result<int64_t> next_incident_id() override { return int64_t{1}; }
  Result<std::vector<Delivery>> deliveries(const DeliveryQuery&) override { return std::vector<Delivery>{}; }

 private:
  mutable std::mutex mu_;
  std::deque<Write> writes_;
};

}  // namespace trainwatch::testing
