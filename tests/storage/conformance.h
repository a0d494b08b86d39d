// The store conformance suite: the same behavioural tests against every Store
// (store_factories.h), so SqliteStore and postgres::PostgresStore are held to one contract.
// Each conformance_*_test.cc declares its typed suite with StoreTest as the base.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include "storage/store_factories.h"

namespace trainwatch::testing {

using StoreFactories = ::testing::Types<SqliteFactory, PostgresFactory>;

constexpr int64_t kT0 = 1'700'000'000'000;  // a whole-millisecond epoch time

template <typename Factory>
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = factory_.open();
    ASSERT_NE(store_, nullptr);
  }
  // Closes the store (committing what is queued) and opens what it left.
  void reopen() {
    store_.reset();
    store_ = factory_.open();
    ASSERT_NE(store_, nullptr);
  }
  Store& store() { return *store_; }

  Factory factory_;
  std::unique_ptr<Store> store_;
};

// Queues `op` and waits for its done; returns the status it reported.
inline Status write_and_wait(Store& store, WriteOp op) {
  std::promise<Status> done;
  auto future = done.get_future();
  EXPECT_TRUE(store.write(std::move(op), [&](const Status& s) { done.set_value(s); }));
  return future.get();
}

inline CheckResult result_at(int64_t at_ms, bool ok = true) {
  CheckResult r;
  r.at = from_unix_ms(at_ms);
  r.ok = ok;
  r.latency_ms = 12.5;
  r.cause = ok ? "" : "connection refused";
  r.http_status = ok ? 200 : 0;
  r.timings = HttpTimings{1.25, 2.5, 3.75, 10.0, 12.5};
  return r;
}

inline MonitorState up_state(int64_t since_ms) {
  MonitorState s;
  s.status = MonitorStatus::kUp;
  s.since = from_unix_ms(since_ms);
  s.last_check = from_unix_ms(since_ms + 1000);
  s.last_latency_ms = 12.5;
  return s;
}

inline Incident incident_of(int64_t id, const std::string& monitor, int64_t started_ms) {
  return Incident{id, monitor, from_unix_ms(started_ms), std::nullopt, "timeout after 10s", ""};
}

}  // namespace trainwatch::testing
