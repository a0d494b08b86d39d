// An answer held until the audit row of its write is recorded (views/write_access.h).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "views/write_access.h"

namespace trainwatch::views {
namespace {

struct Sent {
  std::vector<int> statuses;
  http::Responder responder() {
    return http::Responder([this](http::Response r) { statuses.push_back(r.status); });
  }
};

TEST(HeldAnswer, AnAnswerReadyBeforeTheRecordWaitsForIt) {
  Sent sent;
  HeldAnswer held = hold_until_recorded(sent.responder());
  held.answer(http::Response::json(200, "{}"));
  EXPECT_TRUE(sent.statuses.empty()) << "answered before who asked was recorded";
  held.recorded(Ok{});
  EXPECT_EQ(sent.statuses, std::vector<int>{200});
}

TEST(HeldAnswer, AnAnswerAfterTheRecordGoesOutAtOnce) {
  Sent sent;
  HeldAnswer held = hold_until_recorded(sent.responder());
  held.recorded(Ok{});
  EXPECT_TRUE(sent.statuses.empty());
  held.answer(http::Response::json(502, "{}"));
  EXPECT_EQ(sent.statuses, std::vector<int>{502});
}

TEST(HeldAnswer, ARecordTheStoreRefusedStillLetsTheAnswerOut) {
  // The audit never stops a write: the log says the row was refused.
  Sent sent;
  HeldAnswer held = hold_until_recorded(sent.responder());
  held.answer(http::Response::json(200, "{}"));
  held.recorded(make_error("store.unavailable", "disk full"));
  EXPECT_EQ(sent.statuses, std::vector<int>{200});
}

TEST(HeldAnswer, TheRecordAndTheAnswerOnTwoThreadsSendItOnce) {
  for (int i = 0; i < 200; ++i) {
    Sent sent;
    HeldAnswer held = hold_until_recorded(sent.responder());
    std::thread store([&] { held.recorded(Ok{}); });
    held.answer(http::Response::json(200, "{}"));
    store.join();
    EXPECT_EQ(sent.statuses, std::vector<int>{200});
  }
}

}  // namespace
}  // namespace trainwatch::views
