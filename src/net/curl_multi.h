// CurlMulti: libcurl's multi interface driven by a Boost.Asio io_context, shared by every
// outbound transfer trainwatch makes (HTTP checks, webhooks, SMTP email).
//
// curl tells us which sockets to watch and when its timeout fires
// (CURLMOPT_SOCKETFUNCTION / CURLMOPT_TIMERFUNCTION) and asio waits on them: no thread
// per transfer, thousands of transfers share one io_context thread. Sockets are opened
// and closed through curl's open/close callbacks so asio stops watching a descriptor
// before it is closed (a reused descriptor number is never confused with the old one).
//
// Threading: construct, call add() and destroy on the io_context's thread only. `done`
// runs on that thread, posted (never inline from add() or from inside a curl callback),
// after curl has finished with the handle: the caller may then read CURLINFO_* from it
// and must curl_easy_cleanup it.
//
// Bounds: none of its own; callers bound their transfers (timeouts, body sizes, how many
// they add). Destroying the CurlMulti abandons the transfers in flight: their `done` is
// never called and their easy handles are removed, not cleaned up (the owner does that).
#pragma once

#include <curl/curl.h>
#include <sys/socket.h>

#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>

namespace trainwatch::net {

// curl_global_init is not thread-safe; every user calls this before its first handle.
void init_curl_once();

class CurlMulti {
 public:
  using Done = std::function<void(CURLcode)>;
  // Whether a transfer may connect to an address (after name resolution, before the
  // connect); a refused address is skipped, and with none left the transfer ends with
  // CURLE_COULDNT_CONNECT. Runs on the io_context's thread.
  using AddressFilter = std::function<bool(const sockaddr* address)>;

  explicit CurlMulti(boost::asio::io_context& io);
  ~CurlMulti();
  CurlMulti(const CurlMulti&) = delete;
  CurlMulti& operator=(const CurlMulti&) = delete;

  // Starts `easy` (fully configured by the caller, who keeps owning it). Sets the
  // handle's open/close-socket callbacks; the caller must not set them. `allow`, when
  // given, judges each address the transfer would connect to.
  void add(CURL* easy, Done done, AddressFilter allow = {});

  // Stops a transfer that has not finished; its `done` is not called.
  void cancel(CURL* easy);

  size_t in_flight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainwatch::net
