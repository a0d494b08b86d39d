// The kept-alive HTTP connection (the agent's to the server, a replica's to another), against a real server
// on loopback that counts the connections it accepts: reuse, its bounds, what drops a connection, the one
// retry after the server closed an idle one, and the timeout.
#include "net/http_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fakes/manual_clock.h"
#include "net/counting_http_server.h"

namespace trainwatch::net {
namespace {

using testing::Answer;
using testing::CountingHttpServer;

constexpr Millis kTimeout{200};
const HttpHeaders kHeaders = {{"Content-Type", "application/json"}};
const std::string kReport = R"({"node":"n1","seq":1})";

// The status of a POST that must have got an answer.
int post_ok(HttpConnection& connection, const std::string& url) {
  auto status = connection.post(url, kReport, kHeaders, kTimeout);
  EXPECT_TRUE(status.ok()) << status.error().message;
  return status.ok() ? *status : 0;
}

TEST(HttpConnection, ReusesOneConnectionForTheNextPost) {
  CountingHttpServer server;
  SystemClock clock;
  HttpConnection connection(clock);
  // By name: the lookup runs on its own thread (net/host_lookup.h).
  EXPECT_EQ(post_ok(connection, server.url("localhost")), 200);
  EXPECT_EQ(post_ok(connection, server.url("localhost")), 200);
  EXPECT_EQ(server.requests(), 2);
  EXPECT_EQ(server.accepts(), 1);
}

// A server restart closes the idle connection under the agent: the next POST fails on it
// before any answer and goes once more, on a fresh connection, within its timeout.
TEST(HttpConnection, RetriesOnceWhenTheServerClosedTheIdleConnection) {
  CountingHttpServer server;
  SystemClock clock;
  HttpConnection connection(clock);
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  server.close_connections();
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  EXPECT_EQ(server.accepts(), 2);
  EXPECT_EQ(server.requests(), 2);
}

// The server leaves the socket open after `Connection: close`: reused, the next POST would
// wait for nothing until its timeout.
TEST(HttpConnection, OpensANewConnectionAfterConnectionClose) {
  CountingHttpServer server(Answer::kCloseHeader);
  SystemClock clock;
  HttpConnection connection(clock);
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  server.set_answer(Answer::kKeepAlive);
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  EXPECT_EQ(server.accepts(), 2);
  EXPECT_EQ(server.requests(), 2);
}

TEST(HttpConnection, OpensANewConnectionAfterTheMostRequestsOnOne) {
  CountingHttpServer server;
  SystemClock clock;
  HttpConnection connection(clock);
  for (int i = 0; i < 2 * HttpConnection::kMaxRequests + 1; ++i) {
    ASSERT_EQ(post_ok(connection, server.url()), 200) << "POST " << i;
  }
  EXPECT_EQ(server.accepts(), 3);
}

TEST(HttpConnection, OpensANewConnectionOnceTheOldOneIsTooOld) {
  CountingHttpServer server;
  trainwatch::testing::ManualClock clock;
  HttpConnection connection(clock);
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  clock.advance(HttpConnection::kMaxAge - Millis{1});
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  EXPECT_EQ(server.accepts(), 1);
  clock.advance(Millis{1});
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  EXPECT_EQ(server.accepts(), 2);
}

TEST(HttpConnection, DropsTheConnectionAfterAnErrorAnswer) {
  CountingHttpServer server(Answer::kServerError);
  SystemClock clock;
  HttpConnection connection(clock);
  EXPECT_EQ(post_ok(connection, server.url()), 503);
  server.set_answer(Answer::kKeepAlive);
  EXPECT_EQ(post_ok(connection, server.url()), 200);
  EXPECT_EQ(server.accepts(), 2);
}

TEST(HttpConnection, OpensANewConnectionForAnotherServer) {
  CountingHttpServer first;
  CountingHttpServer second;
  SystemClock clock;
  HttpConnection connection(clock);
  EXPECT_EQ(post_ok(connection, first.url()), 200);
  EXPECT_EQ(post_ok(connection, second.url()), 200);
  EXPECT_EQ(post_ok(connection, first.url()), 200);
  EXPECT_EQ(first.accepts(), 2);
  EXPECT_EQ(second.accepts(), 1);
}

TEST(HttpConnection, AServerThatNeverAnswersCostsTheTimeoutAndNoMore) {
  CountingHttpServer server(Answer::kNever);
  SystemClock clock;
  HttpConnection connection(clock);
  const auto start = std::chrono::steady_clock::now();
  auto status = connection.post(server.url(), kReport, kHeaders, kTimeout);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "push.failed");
  EXPECT_GE(took, kTimeout);
  EXPECT_LT(took, kTimeout + Millis{300}) << "the whole call is bounded by its timeout";
  EXPECT_EQ(server.requests(), 1) << "a timeout is not retried";
}

TEST(HttpConnection, RefusesAURLThatIsNotHttp) {
  SystemClock clock;
  HttpConnection connection(clock);
  auto status = connection.post("ftp://example.com/", kReport, kHeaders, kTimeout);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "push.url");
}

}  // namespace
}  // namespace trainwatch::net
