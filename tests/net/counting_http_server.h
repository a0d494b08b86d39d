// CountingHttpServer: a real HTTP/1.1 server on 127.0.0.1, port 0, that counts the
// connections it accepts and the requests it reads, and answers each request as the test
// says: 200 kept alive, 200 with `Connection: close`, 503, or never. Plain POSIX sockets
// served by one thread of its own; a pipe wakes it for the test's commands, so nothing
// here polls on a timer or sleeps.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace trainwatch::net::testing {

enum class Answer {
  kKeepAlive,    // 200, the connection stays open for the next request
  kCloseHeader,  // 200 with `Connection: close`; the socket is left open and unread, so
                 // a client that reused it anyway would wait for an answer that never comes
  kServerError,  // 503, kept alive as far as the server is concerned
  kNever,        // reads the request and never answers
};

class CountingHttpServer {
 public:
  explicit CountingHttpServer(Answer answer = Answer::kKeepAlive) : answer_(answer) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        ::pipe2(wake_, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "the counting server could not listen";
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~CountingHttpServer() {
    command(Command::kStop);
    thread_.join();
    for (const auto& [fd, pending] : open_) ::close(fd);
    for (int fd : deaf_) ::close(fd);
    ::close(listener_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  CountingHttpServer(const CountingHttpServer&) = delete;
  CountingHttpServer& operator=(const CountingHttpServer&) = delete;

  std::string url(const std::string& host = "127.0.0.1") const {
    return "http://" + host + ":" + std::to_string(port_) + "/api/v1/jobs/j/report";
  }

  int accepts() const {
    std::lock_guard lock(mu_);
    return accepts_;
  }
  int requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }
  void set_answer(Answer answer) {
    std::lock_guard lock(mu_);
    answer_ = answer;
  }

  // Closes every connection it holds, as a server going down does, and returns once they
  // are closed.
  void close_connections() { command(Command::kCloseAll); }

 private:
  enum class Command { kNone, kCloseAll, kStop };

  void command(Command c) {
    std::unique_lock lock(mu_);
    command_ = c;
    const char byte = 1;
    if (::write(wake_[1], &byte, 1) != 1) ADD_FAILURE() << "cannot wake the counting server";
    done_.wait(lock, [&] { return command_ == Command::kNone; });
  }

  void serve() {
    while (true) {
      std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}, {listener_, POLLIN, 0}};
      for (const auto& [fd, pending] : open_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) continue;
      if (fds[0].revents != 0) {
        char byte = 0;
        if (::read(wake_[0], &byte, 1) != 1) continue;
        std::lock_guard lock(mu_);
        const Command c = command_;
        if (c == Command::kCloseAll) {
          for (const auto& [fd, pending] : open_) ::close(fd);
          open_.clear();
        }
        command_ = Command::kNone;
        done_.notify_all();
        if (c == Command::kStop) return;
        continue;
      }
      if (fds[1].revents != 0) {
        const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          open_[fd] = "";
          std::lock_guard lock(mu_);
          ++accepts_;
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents != 0) read_from(fds[i].fd);
      }
    }
  }

  // Reads what came on `fd` and answers every whole request in it.
  void read_from(int fd) {
    char chunk[16 * 1024];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) {
      ::close(fd);
      open_.erase(fd);
      return;
    }
    std::string& pending = open_[fd];
    pending.append(chunk, static_cast<size_t>(n));
    while (true) {
      const size_t head_end = pending.find("\r\n\r\n");
      if (head_end == std::string::npos) return;
      std::string head = pending.substr(0, head_end);
      std::ranges::transform(head, head.begin(), [](unsigned char c) { return std::tolower(c); });
      size_t length = 0;
      if (const size_t at = head.find("content-length:"); at != std::string::npos) {
        length = std::stoul(head.substr(at + 15));
      }
      if (pending.size() < head_end + 4 + length) return;
      pending.erase(0, head_end + 4 + length);
      Answer answer;
      {
        std::lock_guard lock(mu_);
        ++requests_;
        answer = answer_;
      }
      if (!respond(fd, answer)) return;
    }
  }

  // False when the connection is no longer read (closed, or left deaf).
  bool respond(int fd, Answer answer) {
    std::string reply;
    switch (answer) {
      case Answer::kKeepAlive: reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"; break;
      case Answer::kCloseHeader:
        reply = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok";
        break;
      case Answer::kServerError:
        reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy";
        break;
      case Answer::kNever: return true;
    }
    if (::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(reply.size())) {
      ADD_FAILURE() << "the counting server could not answer";
    }
    if (answer == Answer::kCloseHeader) {
      deaf_.push_back(fd);
      open_.erase(fd);
      return false;
    }
    return true;
  }

  int listener_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::thread thread_;
  std::map<int, std::string> open_;  // the serving thread's: fd -> bytes not yet a request
  std::vector<int> deaf_;            // the serving thread's: answered with Connection: close

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable done_;
  Command command_ = Command::kNone;
  Answer answer_;
  int accepts_ = 0, requests_ = 0;
};

}  // namespace trainwatch::net::testing
