// Silent peers: loopback endpoints a checker reaches and that then never answer, so that
// only the check's deadline can end it, plus the means to answer late on purpose and to
// tell whether the checker let go of its socket. Plain POSIX sockets, non-blocking, driven
// from the test thread: nothing here runs on its own.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace trainwatch::checks::testing {

inline sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

inline uint16_t bound_port(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

// How many descriptors this process holds open: a checker that let go of its I/O is back
// to the count from before its check.
inline size_t open_descriptors() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// A TCP listener on 127.0.0.1 that accepts one connection, reads what it is sent and never
// answers unless told to.
class SilentListener {
 public:
  SilentListener() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const sockaddr_in addr = loopback(0);
    if (::bind(listener_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 16) != 0) {
      ADD_FAILURE() << "the silent listener could not listen";
    }
    port_ = bound_port(listener_);
  }
  ~SilentListener() {
    if (peer_ >= 0) ::close(peer_);
    ::close(listener_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;

  uint16_t port() const { return port_; }
  size_t descriptors_accepted() const { return peer_ >= 0 ? 1 : 0; }

  // True once a connection came (for a TCP check: once it connected).
  bool accepted() {
    if (peer_ < 0) peer_ = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    return peer_ >= 0;
  }

  // True once a connection came and sent something (a request, a ClientHello).
  bool received_bytes() {
    if (peer_ < 0) peer_ = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (peer_ < 0) return false;
    char chunk[4096];
    while (true) {
      const ssize_t n = ::recv(peer_, chunk, sizeof chunk, 0);
      if (n > 0) {
        received_ += static_cast<size_t>(n);
        continue;
      }
      if (n == 0) closed_ = true;
      break;
    }
    return received_ > 0;
  }

  // True once the connection's other end closed it: what was sent, then EOF.
  bool peer_closed() {
    for (int tries = 0; tries < 100 && !closed_; ++tries) {
      received_bytes();
      if (closed_ || peer_ < 0) break;
      pollfd readable{peer_, POLLIN, 0};
      ::poll(&readable, 1, 10);
    }
    return closed_;
  }

  void send(std::string_view bytes) {
    if (::send(peer_, bytes.data(), bytes.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(bytes.size()))
      ADD_FAILURE() << "the silent listener could not answer";
  }

  // Closes the accepted connection: the checker's read ends with EOF.
  void hang_up() {
    ::close(peer_);
    peer_ = -1;
  }

 private:
  int listener_ = -1;
  uint16_t port_ = 0;
  int peer_ = -1;
  size_t received_ = 0;
  bool closed_ = false;
};

// A TCP listener whose accept queue is full: listen(2) with a backlog of 0 takes one
// connection, made here, and Linux drops every later SYN while it waits unaccepted, so a
// connect to it stays in SYN_SENT until the connecting side gives up.
class FullBacklogListener {
 public:
  FullBacklogListener() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const sockaddr_in addr = loopback(0);
    if (::bind(listener_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listener_, 0) != 0) {
      ADD_FAILURE() << "the full listener could not listen";
    }
    port_ = bound_port(listener_);
    filler_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const sockaddr_in to = loopback(port_);
    if (::connect(filler_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)
      ADD_FAILURE() << "the filler could not connect";
    pollfd connected{filler_, POLLOUT, 0};
    if (::poll(&connected, 1, 1000) != 1) ADD_FAILURE() << "the filler did not connect";
  }
  ~FullBacklogListener() {
    for (int fd : accepted_) ::close(fd);
    ::close(filler_);
    ::close(listener_);
  }
  FullBacklogListener(const FullBacklogListener&) = delete;
  FullBacklogListener& operator=(const FullBacklogListener&) = delete;

  uint16_t port() const { return port_; }
  size_t descriptors_accepted() const { return accepted_.size(); }

  // Takes the filler's connection off the queue: the next SYN gets in, and the SYN a
  // waiting connect retransmits (after about a second) connects.
  void make_room() { accepted_.push_back(::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC)); }

  // True once a connection besides the filler's was made (non-blocking).
  bool another_connected() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return false;
    accepted_.push_back(fd);
    return true;
  }

  // How many sockets of this host wait in SYN_SENT for this listener (/proc/net/tcp:
  // remote address 127.0.0.1:port, state 02).
  int syns_waiting() const {
    std::ifstream table("/proc/net/tcp");
    std::string line;
    std::getline(table, line);  // the heading
    char wanted[16];
    std::snprintf(wanted, sizeof wanted, "0100007F:%04X", port_);
    int n = 0;
    while (std::getline(table, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (remote == wanted && state == "02") ++n;
    }
    return n;
  }

 private:
  int listener_ = -1;
  int filler_ = -1;
  uint16_t port_ = 0;
  std::vector<int> accepted_;
};

// A UDP socket on 127.0.0.1 that reads datagrams and never answers unless told to.
class SilentUdpPeer {
 public:
  SilentUdpPeer() {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const sockaddr_in addr = loopback(0);
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
      ADD_FAILURE() << "the silent UDP peer could not bind";
    port_ = bound_port(fd_);
  }
  ~SilentUdpPeer() { ::close(fd_); }
  SilentUdpPeer(const SilentUdpPeer&) = delete;
  SilentUdpPeer& operator=(const SilentUdpPeer&) = delete;

  uint16_t port() const { return port_; }

  // True once a datagram came; its sender is who answer() writes to.
  bool received_datagram() {
    char datagram[4096];
    socklen_t len = sizeof sender_;
    if (::recvfrom(fd_, datagram, sizeof datagram, 0, reinterpret_cast<sockaddr*>(&sender_), &len) > 0)
      received_ = true;
    return received_;
  }

  void answer(std::string_view bytes) {
    ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&sender_), sizeof sender_);
  }

  // True when the sender's address is free again, so its socket was closed: a socket
  // still bound there would make this bind fail with EADDRINUSE.
  bool sender_released() const {
    const int probe = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const bool bound = ::bind(probe, reinterpret_cast<const sockaddr*>(&sender_), sizeof sender_) == 0;
    ::close(probe);
    return bound;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
  sockaddr_in sender_{};
  bool received_ = false;
};

}  // namespace trainwatch::checks::testing
