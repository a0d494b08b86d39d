// One HTTP(S) POST, synchronous, bounded by a timeout: how the report pusher talks to the
// server. Beast over Asio, and OpenSSL for https (the system's CA store, the host name
// checked), so the agent, which also runs inside training processes, maps neither libcurl
// nor its dozen dependencies (the agent's memory target in bench/RESULTS.md). A fresh
// connection per call, every few seconds: a server restart leaves no dead keep-alive.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace trainwatch::agent {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// POSTs `body` to `url` (http:// or https://) and returns the response's status. Errors:
// "push.url" for a URL it cannot use, "push.failed" for resolve, connect, TLS or
// exchange failures and for `timeout` passing first (the whole call, DNS included).
Result<int> http_post(const std::string& url, const std::string& body, const HttpHeaders& headers,
                      Millis timeout);

}  // namespace trainwatch::agent
