#include "agent/probes.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trainwatch::agent {

MemoryInfo probe_memory(const std::string& meminfo_path) {
  MemoryInfo info;
  std::ifstream in(meminfo_path);
  if (!in) {
    info.error = "cannot read " + meminfo_path;
    return info;
  }
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  bool have_total = false, have_available = false;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (!(fields >> key >> kb)) continue;
    if (key == "MemTotal:") {
      info.total_bytes = kb * 1024;
      have_total = true;
    } else if (key == "MemAvailable:") {
      info.available_bytes = kb * 1024;
      have_available = true;
    }
  }
  info.ok = have_total && have_available;
  if (!info.ok) info.error = meminfo_path + " has no MemTotal/MemAvailable";
  return info;
}

std::vector<DiskInfo> probe_disks(const std::vector<DiskPath>& paths) {
  std::vector<DiskInfo> out;
  for (const auto& p : paths) {
    DiskInfo d;
    d.name = p.name;
    d.path = p.path;
    struct statvfs st {};
    if (::statvfs(p.path.c_str(), &st) != 0) {
      d.error = std::strerror(errno);
    } else {
      d.ok = true;
      d.total_bytes = static_cast<uint64_t>(st.f_blocks) * st.f_frsize;
      d.free_bytes = static_cast<uint64_t>(st.f_bavail) * st.f_frsize;
    }
    out.push_back(std::move(d));
  }
  return out;
}

RendezvousInfo probe_rendezvous(const std::string& host, int port, Millis timeout) {
  RendezvousInfo info;
  info.checked = true;
  info.host = host.empty() ? "127.0.0.1" : host;
  info.port = port;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  if (int rc = ::getaddrinfo(info.host.c_str(), port_text.c_str(), &hints, &res); rc != 0) {
    info.error = gai_strerror(rc);
    return info;
  }
  for (addrinfo* ai = res; ai && !info.listening; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc == 0) {
      info.listening = true;
    } else if (errno == EINPROGRESS) {
      pollfd pfd{fd, POLLOUT, 0};
      if (::poll(&pfd, 1, static_cast<int>(timeout.count())) == 1) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        info.listening = err == 0;
        if (err) info.error = std::strerror(err);
      } else {
        info.error = "no answer within " + std::to_string(timeout.count()) + " ms";
      }
    } else {
      info.error = std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  if (info.listening) info.error.clear();
  return info;
}

}  // namespace trainwatch::agent
