// HostLookup: a host name to addresses, within a deadline. getaddrinfo cannot be
// cancelled, and Asio's resolver joins its lookup thread when its io_context goes, so a
// DNS server that never answers would hold the caller until the C library gives up
// (seconds to minutes, resolv.conf's timeout x attempts), past any push timeout. Here
// the lookup runs on a thread of its own, and the caller stops waiting at its deadline.
//
// Bound: one lookup in flight per HostLookup. A lookup abandoned at a deadline goes on
// (its thread holds what it needs) and the next call for the same host waits for it rather
// than starting another; a call for another host while it runs fails at once. A numeric
// address (127.0.0.1, ::1) is answered on the spot, without a thread.
//
// Threads: one owner thread calls resolve(); the lookup threads touch only their own state.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>

#include "core/result.h"

namespace trainwatch::net {

class HostLookup {
 public:
  using Endpoints = std::vector<boost::asio::ip::tcp::endpoint>;

  // The addresses of `host` (a name or a numeric address, without brackets) with `port`;
  // error "push.failed" when the lookup fails, or when `deadline` passes first.
  Result<Endpoints> resolve(const std::string& host, const std::string& port,
                            std::chrono::steady_clock::time_point deadline);

 private:
  struct Lookup;                     // shared with the thread that runs it
  std::shared_ptr<Lookup> running_;  // a lookup whose caller gave up and that may still run
};

}  // namespace trainwatch::net
