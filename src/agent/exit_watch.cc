#include "agent/exit_watch.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace trainwatch::agent {

std::vector<std::pair<int32_t, uint32_t>> parse_process_exits(const char* data, size_t size) {
  std::vector<std::pair<int32_t, uint32_t>> out;
  size_t at = 0;
  while (size - at >= sizeof(nlmsghdr)) {
    nlmsghdr nl{};
    std::memcpy(&nl, data + at, sizeof nl);
    if (nl.nlmsg_len < sizeof nl || nl.nlmsg_len > size - at) break;
    const char* payload = data + at + NLMSG_HDRLEN;
    const size_t payload_size = nl.nlmsg_len - NLMSG_HDRLEN;
    if (payload_size >= sizeof(cn_msg) + sizeof(proc_event)) {
      cn_msg cn{};
      std::memcpy(&cn, payload, sizeof cn);
      proc_event ev{};
      std::memcpy(&ev, payload + sizeof(cn_msg), sizeof ev);
      // Threads exit one by one; the process has ended when its leader does.
      if (cn.id.idx == CN_IDX_PROC && cn.id.val == CN_VAL_PROC && ev.what == proc_event::PROC_EVENT_EXIT &&
          ev.event_data.exit.process_pid == ev.event_data.exit.process_tgid) {
        out.emplace_back(ev.event_data.exit.process_tgid, ev.event_data.exit.exit_code);
      }
    }
    at += NLMSG_ALIGN(nl.nlmsg_len);
  }
  return out;
}

std::optional<uint64_t> read_oom_kill_count(const std::string& proc_root) {
  std::ifstream in(proc_root + "/vmstat");
  std::string key;
  uint64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return std::nullopt;
}

std::unique_ptr<ExitWatch> ExitWatch::open(std::string& why_not) {
  const int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
  if (fd < 0) {
    why_not = std::string("process events: ") + std::strerror(errno);
    return nullptr;
  }
  // The kernel queues every process event of the host (fork, exec, exit) until the next
  // drain, a sample later. The default queue holds about 256 of them: a busy host (a build,
  // DataLoader workers coming and going) fills it within that second, and a rank's exit
  // that falls past it reads "exit status unknown". FORCE passes rmem_max with the
  // CAP_NET_ADMIN the subscription needs anyway; without it, the most rmem_max allows.
  const int queue_bytes = kQueueBytes;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &queue_bytes, sizeof queue_bytes) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &queue_bytes, sizeof queue_bytes);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  // The subscription: a netlink header, a connector header, then PROC_CN_MCAST_LISTEN.
  const uint32_t op = PROC_CN_MCAST_LISTEN;
  nlmsghdr nl{};
  nl.nlmsg_len = NLMSG_LENGTH(sizeof(cn_msg) + sizeof op);
  nl.nlmsg_type = NLMSG_DONE;
  nl.nlmsg_pid = static_cast<uint32_t>(getpid());
  cn_msg cn{};
  cn.id = {CN_IDX_PROC, CN_VAL_PROC};
  cn.len = sizeof op;
  std::array<char, NLMSG_LENGTH(sizeof(cn_msg) + sizeof(uint32_t))> request{};
  std::memcpy(request.data(), &nl, sizeof nl);
  std::memcpy(request.data() + NLMSG_HDRLEN, &cn, sizeof cn);
  std::memcpy(request.data() + NLMSG_HDRLEN + sizeof cn, &op, sizeof op);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      send(fd, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) {
    why_not = std::string("process events: ") + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<ExitWatch>(new ExitWatch(fd));
}

ExitWatch::~ExitWatch() { close(fd_); }

void ExitWatch::drain(const std::function<bool(int32_t)>& wanted) {
  std::array<char, 8192> buf{};
  // Bounded: a host that forks faster than this is read keeps the rest for the next sample.
  for (int i = 0; i < 4096; ++i) {
    const ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    // ENOBUFS: events were dropped while nobody read; the exits in them stay unknown.
    if (n < 0 && errno == ENOBUFS) continue;
    if (n <= 0) return;
    for (const auto& [pid, status] : parse_process_exits(buf.data(), static_cast<size_t>(n))) {
      if (!wanted(pid)) continue;
      if (exits_.insert_or_assign(pid, status).second) order_.push_back(pid);
      while (order_.size() > kMaxKept) {
        exits_.erase(order_.front());
        order_.pop_front();
      }
    }
  }
}

std::optional<uint32_t> ExitWatch::take(int32_t pid) {
  auto it = exits_.find(pid);
  if (it == exits_.end()) return std::nullopt;
  const uint32_t status = it->second;
  exits_.erase(it);
  std::erase(order_, pid);
  return status;
}

}  // namespace trainwatch::agent
