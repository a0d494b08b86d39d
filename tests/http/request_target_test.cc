// Reading a request's target into its path and query (http/request_target.h).
#include "http/request_target.h"

#include <gtest/gtest.h>

#include <string>

namespace trainwatch::http {
namespace {

Request with_target(std::string target) {
  Request request;
  request.target = std::move(target);
  return request;
}

TEST(RequestTargetTest, APlainPathIsTakenAsSent) {
  Request r = with_target("/ping/0123abcd-._~!$&'()*+,;=:@/start");
  ASSERT_TRUE(parse_target(r));
  EXPECT_EQ(r.path, "/ping/0123abcd-._~!$&'()*+,;=:@/start");
  EXPECT_TRUE(r.query.empty());
}

TEST(RequestTargetTest, EscapesAreDecodedAndTheQueryIsSplitLastKeyWinning) {
  Request r = with_target("/api/push/a%20b?status=up&msg=x%2Fy&status=down");
  ASSERT_TRUE(parse_target(r));
  EXPECT_EQ(r.path, "/api/push/a b");
  EXPECT_EQ(r.query.at("status"), "down");
  EXPECT_EQ(r.query.at("msg"), "x/y");
}

TEST(RequestTargetTest, ATargetThatIsNotAnOriginFormPathIsRefused) {
  for (const char* bad : {"", "ping/x", "http://host/ping/x", "/ping/a b", "/ping/%zz", "*"}) {
    Request r = with_target(bad);
    EXPECT_FALSE(parse_target(r)) << bad;
  }
}

}  // namespace
}  // namespace trainwatch::http
