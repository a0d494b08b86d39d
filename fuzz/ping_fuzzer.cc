// The ping path: the routes of http/ping_routes (URL forms, actions, Uptime Kuma's push
// query) through the token index, the rate limit and the body kept, to the point where
// the engine would take the ping. Input: the request target on the first line, the body
// after it:
//   /ping/fuzz-heartbeat-1/fail
//   Traceback (most recent call last): ...
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "api/ping_routes.h"
#include "config/loader.h"
#include "fuzz_clock.h"
#include "heartbeat/ingest.h"
#include "heartbeat/ping_request.h"
#include "http/request_target.h"
#include "http/server.h"

namespace {

using namespace trainwatch;

// Two heartbeat monitors; the second keeps only a short body, so cutting is exercised.
constexpr std::string_view kConfig = R"(
monitors:
  - name: nightly
    type: heartbeat
    period: 1m
    grace: 1m
    token: fuzz-heartbeat-1
  - name: short-body
    type: heartbeat
    period: 1h
    token: fuzz-heartbeat-2
    ping_body_limit: 16
)";

struct PingPath {
  fuzz::SteppingClock clock;
  // Every ping "commits" at once: what is fuzzed is the path from request to sink.
  struct CommitAtOnce final : heartbeat::PingSink {
    void record_ping(std::string, Ping ping, WriteDone done) override {
      (void)ping.body.size();
      done(Status(Ok{}));
    }
  } sink;
  heartbeat::PingIngest ingest{clock, sink};
  http::Router router;

  PingPath() {
    LoadedConfig loaded = load_config_text(std::string(kConfig), "fuzz.yaml");
    if (!loaded.config) __builtin_trap();  // the fixture itself must be valid
    ingest.configure(*loaded.config);
    api::add_ping_routes(router, ingest);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static PingPath* path = new PingPath();  // lives for the whole run: handlers hold none of it
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t end = input.find('\n');

  http::Request request;
  request.method = size % 3 == 0 ? "GET" : size % 3 == 1 ? "POST" : "HEAD";
  request.target = std::string(input.substr(0, end));
  request.body = end == std::string_view::npos ? std::string() : std::string(input.substr(end + 1));
  request.remote_address = "127.0.0.1";
  request.headers["user-agent"] = "fuzz/1.0";
  if (!http::parse_target(request)) return 0;  // the server answers 400 before routing
  path->router.dispatch(request, http::Responder([](http::Response r) { (void)r.body.size(); }));

  // The pure readers on their own, with every limit a config may set.
  (void)heartbeat::parse_ping_action(request.body);
  (void)heartbeat::keep_body(request.body, size % 64);
  return 0;
}
