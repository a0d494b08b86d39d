"""SlowClients: `count` TCP clients from 100 loopback addresses (127.1.x.y), each sending
its request header one byte a second and never finishing it. A client the server closes
is replaced by a new one, so `count` stay connected or connecting until stop(), `limit_s`
or `max_created` sockets, whichever comes first. One thread; the caller raises its own
RLIMIT_NOFILE first."""
import socket
import threading
import time

SOURCE_ADDRESSES = [f"127.1.{i // 250}.{i % 250 + 1}" for i in range(100)]


class SlowClients:
    def __init__(self, port, count, limit_s=120, max_created=1_000_000):
        self.port = port
        self.count = count
        self.limit_s = limit_s
        self.max_created = max_created
        self.created = 0
        self.closed_by_server = 0
        self.connected_peak = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=30)

    def open_one(self):
        s = socket.socket()
        s.setblocking(False)
        s.bind((SOURCE_ADDRESSES[self.created % len(SOURCE_ADDRESSES)], 0))
        s.connect_ex(("127.0.0.1", self.port))
        self.created += 1
        return s

    def run(self):
        deadline = time.monotonic() + self.limit_s
        clients = []
        try:
            while not self.stopping.is_set() and time.monotonic() < deadline:
                while len(clients) < self.count and self.created < self.max_created:
                    clients.append(self.open_one())
                alive, connected = [], 0
                for s in clients:
                    try:
                        if s.recv(1) == b"":  # the server closed it
                            raise ConnectionResetError
                    except BlockingIOError:
                        pass
                    except OSError:
                        s.close()
                        self.closed_by_server += 1
                        continue
                    try:
                        s.send(b"G")  # one more byte of a header that never ends
                        connected += 1
                    except BlockingIOError:
                        pass  # still connecting
                    except OSError:
                        s.close()
                        self.closed_by_server += 1
                        continue
                    alive.append(s)
                clients = alive
                self.connected_peak = max(self.connected_peak, connected)
                self.stopping.wait(1.0)
        finally:
            for s in clients:
                s.close()
