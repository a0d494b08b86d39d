// FakeStore: a Store that keeps every write waiting until the test answers it, so a test
// decides when (and whether) each write commits. Reads answer empty, except the outbox:
// rows a test adds with add_delivery() are read by deliveries(), and an UpdateDelivery
// that is answered with success changes its row, as a commit would; monitor states and
// incidents a test puts (put_state, put_incident) are read back as stored.
#pragma once

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>

#include "storage/store.h"
#include "storage/store_errors.h"

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
  WriteHealth write_health() const override {
    std::lock_guard lock(mu_);
    return health_;
  }
  // What write_health() says from now on (a store that refuses, or whose writes are late).
  void set_write_health(WriteHealth health) {
    std::lock_guard lock(mu_);
    health_ = std::move(health);
  }

  // Answers the oldest unanswered write with `status`; false when none waits.
  bool answer(const Status& status) {
    Write w;
    {
      std::lock_guard lock(mu_);
      if (writes_.empty()) return false;
      w = std::move(writes_.front());
      writes_.pop_front();
    }
    if (status.ok()) {
      if (const auto* update = std::get_if<UpdateDelivery>(&w.op)) apply(*update);
    }
    if (w.done) w.done(status);
    return true;
  }
  // Answers every waiting write, and those written meanwhile, with `status`.
  void answer_all(const Status& status) {
    while (answer(status)) {
    }
  }

  // An outbox row as the engine commits it (RecordResult.outbox); returns its id.
  int64_t add_delivery(NewDelivery spec) {
    std::lock_guard lock(mu_);
    Delivery row;
    row.id = static_cast<int64_t>(outbox_.size()) + 1;
    row.spec = std::move(spec);
    outbox_.push_back(row);
    return row.id;
  }
  // A row as it stands, with the answered updates applied; nullopt for an unknown id.
  std::optional<Delivery> delivery(int64_t id) const {
    std::lock_guard lock(mu_);
    if (id < 1 || id > static_cast<int64_t>(outbox_.size())) return std::nullopt;
    return outbox_[static_cast<size_t>(id - 1)];
  }
  // A monitor's state or an incident as stored; a second put replaces the first.
  void put_state(const std::string& monitor, const MonitorState& state) {
    std::lock_guard lock(mu_);
    states_[monitor] = state;
  }
  void put_incident(const Incident& incident) {
    std::lock_guard lock(mu_);
    incidents_[incident.id] = incident;
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

  Result<std::vector<StoredState>> load_states() override {
    std::lock_guard lock(mu_);
    std::vector<StoredState> out;
    for (const auto& [monitor, state] : states_) out.push_back(StoredState{monitor, state});
    return out;
  }
  Result<std::vector<Incident>> incidents(const IncidentQuery&) override { return std::vector<Incident>{}; }
  Result<std::optional<Incident>> incident(int64_t id) override {
    std::lock_guard lock(mu_);
    auto it = incidents_.find(id);
    return it == incidents_.end() ? std::optional<Incident>{} : std::optional<Incident>{it->second};
  }
  Result<std::map<int64_t, std::vector<IncidentUpdate>>> incident_updates(
      const std::vector<int64_t>&) override {
    return std::map<int64_t, std::vector<IncidentUpdate>>{};
  }
  Result<std::vector<CheckResult>> results(const ResultQuery&) override { return std::vector<CheckResult>{}; }
  Result<std::vector<PingRecord>> pings(const PingQuery&) override { return std::vector<PingRecord>{}; }
  Result<HeartbeatMarks> heartbeat_marks(const std::string& name) override {
    std::lock_guard lock(mu_);
    if (pings_read_error_) return *pings_read_error_;
    auto it = stored_marks_.find(name);
    return it == stored_marks_.end() ? HeartbeatMarks{} : it->second;
  }
  // What heartbeat_marks reads for `name` from now on: pings another replica stored.
  void store_marks(const std::string& name, HeartbeatMarks marks) {
    std::lock_guard lock(mu_);
    stored_marks_[name] = std::move(marks);
  }
  // Reads of the stored pings fail with this until it is cleared (heartbeat_pings locked).
  void fail_ping_reads(std::optional<Error> error) {
    std::lock_guard lock(mu_);
    pings_read_error_ = std::move(error);
  }
  Result<std::map<std::string, std::string>> heartbeat_tokens() override {
    std::lock_guard lock(mu_);
    return tokens_;
  }
  // What heartbeat_tokens() reads from now on (tokens another replica stored).
  void set_heartbeat_tokens(std::map<std::string, std::string> tokens) {
    std::lock_guard lock(mu_);
    tokens_ = std::move(tokens);
  }
  Result<std::vector<UptimeBucket>> uptime(const UptimeQuery&) override {
    return std::vector<UptimeBucket>{};
  }
  Result<std::map<std::string, std::vector<UptimeBucket>>> uptime_of(const std::vector<std::string>&,
                                                                     const UptimeQuery&) override {
    return std::map<std::string, std::vector<UptimeBucket>>{};
  }
  Result<std::vector<ApiMonitorSpec>> api_monitors() override { return std::vector<ApiMonitorSpec>{}; }
  Result<std::vector<ApiWindowSpec>> api_windows() override { return std::vector<ApiWindowSpec>{}; }
  Result<std::vector<ApiChannelSpec>> api_channels() override { return std::vector<ApiChannelSpec>{}; }
  Result<int64_t> next_api_window_id() override { return int64_t{1}; }
  Result<NodeReportFeed> node_reports_after(int64_t cursor) override { return NodeReportFeed{{}, cursor}; }
  Result<std::vector<StoredJobMemo>> job_memos() override { return std::vector<StoredJobMemo>{}; }
  Result<std::vector<UserRecord>> users() override { return std::vector<UserRecord>{}; }
  Result<std::vector<ApiTokenRecord>> api_tokens() override { return std::vector<ApiTokenRecord>{}; }
  Result<std::vector<AuditEntry>> audit(const AuditQuery&) override { return std::vector<AuditEntry>{}; }
  Result<std::optional<std::string>> shared_key(const std::string&) override {
    return std::optional<std::string>();
  }
  Result<bool> alert_link_used(const std::string&) override { return false; }
  Result<int64_t> next_incident_id() override { return int64_t{1}; }
  // As a shared store hands them out: blocks that never overlap.
  Result<int64_t> reserve_incident_ids(int count) override {
    std::lock_guard lock(mu_);
    const int64_t first = next_reserved_id_;
    next_reserved_id_ += count;
    return first;
  }
  // As a shared store claims them: each claim grows the monitor's epoch. Writes are not
  // fenced here; a test answers one with store_error::kFenced to play a newer claim elsewhere.
  Result<std::map<std::string, int64_t>> claim_monitors(const std::string& owner,
                                                        const std::vector<std::string>& monitors) override {
    std::lock_guard lock(mu_);
    std::map<std::string, int64_t> out;
    for (const auto& m : monitors) {
      out[m] = ++epochs_[m];
      owners_[m] = owner;
    }
    ++claims_;
    return out;
  }
  int64_t epoch_of(const std::string& monitor) const {
    std::lock_guard lock(mu_);
    auto it = epochs_.find(monitor);
    return it == epochs_.end() ? 0 : it->second;
  }
  int claims() const {
    std::lock_guard lock(mu_);
    return claims_;
  }
  // Reads of the outbox fail with this until it is cleared (a locked or lost table).
  void fail_outbox_reads(std::optional<Error> error) {
    std::lock_guard lock(mu_);
    outbox_read_error_ = std::move(error);
  }
  // Filters like the SQL store: `after_id` oldest first, otherwise newest first.
  Result<std::vector<Delivery>> deliveries(const DeliveryQuery& q) override {
    std::lock_guard lock(mu_);
    if (outbox_read_error_) return *outbox_read_error_;
    std::vector<Delivery> out;
    for (const auto& row : outbox_) {
      if (q.channel && row.spec.channel != *q.channel) continue;
      if (q.monitor && row.spec.monitor != *q.monitor) continue;
      if (q.status && row.status != *q.status) continue;
      if (q.after_id && row.id <= *q.after_id) continue;
      if (q.before_id && row.id >= *q.before_id) continue;
      out.push_back(row);
    }
    if (!q.after_id) std::reverse(out.begin(), out.end());
    if (out.size() > static_cast<size_t>(q.limit)) out.resize(static_cast<size_t>(q.limit));
    return out;
  }

 private:
  void apply(const UpdateDelivery& u) {
    std::lock_guard lock(mu_);
    if (u.id < 1 || u.id > static_cast<int64_t>(outbox_.size())) return;
    Delivery& row = outbox_[static_cast<size_t>(u.id - 1)];
    row.status = u.status;
    row.attempts = u.attempts;
    row.first_attempt = u.first_attempt;
    row.last_attempt = u.last_attempt;
    row.next_attempt = u.next_attempt;
    row.last_error = u.last_error;
    row.http_status = u.http_status;
    row.finished = u.finished;
  }

  mutable std::mutex mu_;
  int64_t next_reserved_id_ = 1;
  std::deque<Write> writes_;
  std::vector<Delivery> outbox_;  // row id - 1 is its index
  std::map<std::string, MonitorState> states_;
  std::map<int64_t, Incident> incidents_;
  std::map<std::string, int64_t> epochs_;
  std::map<std::string, std::string> owners_;
  int claims_ = 0;
  std::optional<Error> outbox_read_error_;
  std::optional<Error> pings_read_error_;
  std::map<std::string, HeartbeatMarks> stored_marks_;
  std::map<std::string, std::string> tokens_;
  WriteHealth health_;
};

}  // namespace trainwatch::testing
