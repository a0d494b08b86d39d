#include "net/host_lookup.h"

#include <charconv>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>

namespace trainwatch::net {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct HostLookup::Lookup {
  std::string host, port;
  std::mutex mu;  // guards `answer`
  std::condition_variable done;
  std::optional<Result<Endpoints>> answer;  // set once, by the lookup's thread
};

namespace {

// Blocking getaddrinfo, on the lookup's own thread.
Result<HostLookup::Endpoints> look_up(const std::string& host, const std::string& port) {
  asio::io_context io;  // the synchronous resolve needs one, and runs on this thread
  tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, port, ec);
  if (ec) return make_error("push.failed", "cannot resolve '" + host + "': " + ec.message());
  HostLookup::Endpoints endpoints;
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  if (endpoints.empty()) return make_error("push.failed", "'" + host + "' has no address");
  return endpoints;
}

}  // namespace

Result<HostLookup::Endpoints> HostLookup::resolve(const std::string& host, const std::string& port,
                                                  std::chrono::steady_clock::time_point deadline) {
  uint16_t port_number = 0;
  const auto [end, parse_error] = std::from_chars(port.data(), port.data() + port.size(), port_number);
  if (parse_error != std::errc() || end != port.data() + port.size()) {
    return make_error("push.failed", "'" + port + "' is not a port");
  }
  boost::system::error_code not_numeric;
  const auto address = asio::ip::make_address(host, not_numeric);
  if (!not_numeric) return Endpoints{tcp::endpoint(address, port_number)};

  if (running_ && (running_->host != host || running_->port != port)) {
    std::lock_guard lock(running_->mu);
    if (!running_->answer) {
      return make_error("push.failed",
                        "the lookup of '" + running_->host + "' from an earlier try still runs");
    }
    running_.reset();
  }
  if (!running_) {
    auto lookup = std::make_shared<Lookup>();
    lookup->host = host;
    lookup->port = port;
    try {
      std::thread([lookup] {
        auto answer = look_up(lookup->host, lookup->port);
        std::lock_guard lock(lookup->mu);
        lookup->answer = std::move(answer);
        lookup->done.notify_all();
      }).detach();
    } catch (const std::system_error& e) {
      return make_error("push.failed", std::string("cannot start a DNS lookup: ") + e.what());
    }
    running_ = std::move(lookup);
  }
  std::unique_lock lock(running_->mu);
  if (!running_->done.wait_until(lock, deadline, [&] { return running_->answer.has_value(); })) {
    return make_error("push.failed", "no address for '" + host + "' within the timeout");
  }
  Result<Endpoints> answer = std::move(*running_->answer);
  lock.unlock();
  running_.reset();
  return answer;
}

}  // namespace trainwatch::net
