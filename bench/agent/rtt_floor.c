/* The round-trip floor of this machine for one HTTP connection: a server that does no
 * work at all (one thread, epoll, the same fixed answer to whatever arrives, no parsing).
 * bench_python.py runs wrk against it beside the agent and the seed, so a one-connection
 * figure can be read against what any server that sleeps between requests can reach here.
 * Not a server: it assumes every read is one whole request.
 *
 * Usage: rtt_floor PORT */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const int one = 1;
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {0};
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)atoi(argv[1]));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(listener, 128) != 0) return 1;
  int poll = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN, .data.fd = listener};
  epoll_ctl(poll, EPOLL_CTL_ADD, listener, &ev);
  static const char answer[] =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"status\":\"healthy\"}";
  char buf[8192];
  struct epoll_event ready[64];
  for (;;) {
    int n = epoll_wait(poll, ready, 64, -1);
    for (int i = 0; i < n; i++) {
      int fd = ready[i].data.fd;
      if (fd == listener) {
        int conn = accept4(listener, NULL, NULL, SOCK_NONBLOCK);
        if (conn < 0) continue;
        setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event c = {.events = EPOLLIN, .data.fd = conn};
        epoll_ctl(poll, EPOLL_CTL_ADD, conn, &c);
      } else if (read(fd, buf, sizeof buf) <= 0) {
        close(fd);
      } else if (write(fd, answer, sizeof answer - 1) < 0) {
        close(fd);
      }
    }
  }
}
