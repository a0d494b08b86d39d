// report_flood: the node agents of one big training job, simulated at their full rate.
//
//   report_flood --port P [--host 127.0.0.1] [--job frontier] [--token T] [--nodes 16384]
//       [--period 5] [--duration 60] [--warmup 10] [--connections 256] [--timeout 10]
//       [--window S] [--kill-at S] [--bind-sources] [--max-queue 4096]
//
// Node i of N sends its report at i x period / N past each period, open loop: a report's
// latency is counted from the time it was due, so a slow server shows as latency and never
// as a lower offered rate. Reports go over a pool of C kept-alive HTTP/1.1 connections,
// node i on connection i % C, one request at a time on each (no pipelining); a report
// whose connection is busy when it is due waits in that connection's queue (at most
// --max-queue; beyond that it is dropped and counted). A connection the server closes
// (`Connection: close`, after 100 requests or 60 s) is opened again for the next report.
// With --bind-sources connection c binds 127.10.x.y (c + 1), as bench_scale.py's agents do,
// so that a server's per-address connection bound is not what is measured.
//
// Each body is shaped like bench_scale.py's Job.body: 8 ranks that step together every
// 0.5 s, 8 GPUs, a disk and the node's memory, world_size nodes x 8. The fixed parts are
// written once; only the step numbers and ages are formatted per report. With --kill-at S,
// node 1234's local rank 5 (rank 9877) is SIGKILLed S s after the start: that node reports
// at once (alive false, state '?', exit signal 9; that report goes ahead of whatever waits on
// its connection), and its 7 other ranks stop stepping.
//
// Prints to stderr every 5 s, and at the end one JSON line to stdout: reports sent, answers
// by status (and how many 5xx were the server's own problem+json, not a proxy's page), offered
// and achieved rate over the measured window (--window s from --warmup on;
// by default up to --duration; reports due after it are counted apart, under "after"),
// latency from the scheduled time (p50/p99/p99.9/max, a report never answered counting as
// infinitely late), how late sends went, and this process's CPU seconds.
// Bounded: sends stop at --duration; answers are waited for at most --timeout after it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kRanksPerNode = 8;
constexpr int kGpusPerNode = 8;
constexpr double kStepS = 0.5;
constexpr long kBaseStep = 1000;
constexpr double kJobAgeS = 600.0;  // the job has been training for 10 minutes at the start
constexpr int kVictimNode = 1234;
constexpr int kVictimLocal = 5;

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string job = "frontier";
  std::string token;
  int nodes = 16384;
  double period = 5.0;
  double duration = 60.0;
  double warmup = 10.0;
  double window = -1.0;  // default: up to duration
  int connections = 256;
  double timeout = 10.0;
  double kill_at = -1.0;
  bool bind_sources = false;
  std::size_t max_queue = 4096;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(
      stderr,
      "report_flood: %s\nusage: report_flood --port P [--host H] [--job J] [--token T] "
      "[--nodes N] [--period S] [--duration S] [--warmup S] [--window S] [--connections C] [--timeout S] "
      "[--kill-at S] [--bind-sources] [--max-queue Q]\n",
      why);
  std::exit(2);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--bind-sources") {
      o.bind_sources = true;
      continue;
    }
    if (i + 1 >= argc) usage("an option without its value");
    const char* v = argv[++i];
    if (a == "--host") {
      o.host = v;
    } else if (a == "--port") {
      o.port = std::atoi(v);
    } else if (a == "--job") {
      o.job = v;
    } else if (a == "--token") {
      o.token = v;
    } else if (a == "--nodes") {
      o.nodes = std::atoi(v);
    } else if (a == "--period") {
      o.period = std::atof(v);
    } else if (a == "--duration") {
      o.duration = std::atof(v);
    } else if (a == "--warmup") {
      o.warmup = std::atof(v);
    } else if (a == "--window") {
      o.window = std::atof(v);
    } else if (a == "--connections") {
      o.connections = std::atoi(v);
    } else if (a == "--timeout") {
      o.timeout = std::atof(v);
    } else if (a == "--kill-at") {
      o.kill_at = std::atof(v);
    } else if (a == "--max-queue") {
      o.max_queue = static_cast<std::size_t>(std::atol(v));
    } else {
      usage("an unknown option");
    }
  }
  if (o.port <= 0 || o.port > 65535) usage("--port is required");
  if (o.nodes < 1 || o.nodes > 1'000'000) usage("--nodes must be 1 to 1,000,000");
  if (o.period <= 0.0 || o.duration <= 0.0 || o.warmup < 0.0 || o.warmup >= o.duration)
    usage("--period and --duration must be positive, and --warmup below --duration");
  if (o.window < 0.0) o.window = o.duration - o.warmup;
  if (o.window <= 0.0 || o.warmup + o.window > o.duration + 1e-9)
    usage("--window must be positive and end by --duration");
  if (o.connections < 1 || o.connections > 60'000) usage("--connections must be 1 to 60,000");
  if (o.timeout <= 0.0) usage("--timeout must be positive");
  if (o.max_queue < 1) usage("--max-queue must be at least 1");
  return o;
}

// Appends text and numbers to one buffer, no allocation once it has grown to a body's size.
class Writer {
 public:
  void clear() { buf_.clear(); }
  void lit(std::string_view s) { buf_.append(s); }
  void num(long v) {
    std::array<char, 24> tmp{};
    auto r = std::to_chars(tmp.data(), tmp.data() + tmp.size(), v);
    buf_.append(tmp.data(), r.ptr);
  }
  void fixed(double v, int decimals) {
    std::array<char, 48> tmp{};
    auto r = std::to_chars(tmp.data(), tmp.data() + tmp.size(), v, std::chars_format::fixed, decimals);
    buf_.append(tmp.data(), r.ptr);
  }
  const std::string& str() const { return buf_; }

 private:
  std::string buf_;
};

// The job's ranks as a function of time, and the fixed parts of each report written once.
class Job {
 public:
  Job(const Options& o, double start) : o_(o), job_t0_(start - kJobAgeS) {
    victim_node_ = std::min(kVictimNode, o.nodes - 1);
    if (o.kill_at >= 0.0) kill_time_ = start + o.kill_at;
    Writer w;
    w.lit(R"(],"gpus":[)");
    for (int i = 0; i < kGpusPerNode; ++i) {
      if (i) w.lit(",");
      w.lit(R"({"index":)");
      w.num(i);
      w.lit(R"(,"name":"NVIDIA H100 80GB HBM3","lost":false,"memory_used_bytes":)");
      w.num(61'000'000'000L + i * 1'000'000L);
      w.lit(R"(,"memory_total_bytes":85520809984,"ecc_uncorrected":0,"last_xid":0,)"
            R"("last_xid_critical":false,"xid_count":0})");
    }
    w.lit(R"(],"disks":[{"name":"ckpt","path":"/ckpt","ok":true,"error":"","free_bytes":9000000000000,)"
          R"("total_bytes":15000000000000}],"memory":{"available_bytes":1500000000000,)"
          R"("total_bytes":2000000000000}})");
    tail_ = w.str();
    head_ = R"({"schema":1,"job":")" + o.job + R"(","node":")";
    request_line_ = "POST /api/v1/jobs/" + o.job + "/report HTTP/1.1\r\nHost: " + o.host + ":" +
                    std::to_string(o.port) + "\r\n";
    if (!o.token.empty()) request_line_ += "Authorization: Bearer " + o.token + "\r\n";
    request_line_ += "Content-Type: application/json\r\nContent-Length: ";
  }

  int victim_node() const { return victim_node_; }
  bool killed(int node, double now) const {
    return kill_time_ > 0.0 && node == victim_node_ && now >= kill_time_;
  }
  double kill_time() const { return kill_time_; }

  // The whole request (head and body) for node `n`'s report number `seq`, sent at `now`.
  void request(Writer& out, Writer& body, int n, long seq, double now) const {
    write_body(body, n, seq, now);
    out.clear();
    out.lit(request_line_);
    out.num(static_cast<long>(body.str().size()));
    out.lit("\r\n\r\n");
    out.lit(body.str());
  }

 private:
  void write_body(Writer& w, int n, long seq, double now) const {
    const bool dead = killed(n, now);
    const double frozen = dead ? kill_time_ : now;
    const long step = kBaseStep + static_cast<long>(std::floor((frozen - job_t0_) / kStepS));
    const double step_t = job_t0_ + static_cast<double>(step - kBaseStep) * kStepS;
    const double elapsed = now - job_t0_;
    const double loss = 2.0 + 1.5 * std::exp(-static_cast<double>(step) / 3000.0);
    const long age_ms = static_cast<long>((now - step_t) * 1000.0);
    const long elapsed_ms = static_cast<long>(elapsed * 1000.0);
    const long world = static_cast<long>(o_.nodes) * kRanksPerNode;
    w.clear();
    w.lit(head_);
    std::array<char, 16> name{};
    std::snprintf(name.data(), name.size(), "node-%04d", n);
    w.lit(name.data());
    w.lit(R"(","seq":)");
    w.num(seq);
    w.lit(R"(,"final":false,"agent_pid":)");
    w.num(100'000L + n);
    w.lit(R"(,"report_every_ms":)");
    w.num(std::lround(o_.period * 1000.0));
    w.lit(R"(,"ranks":[)");
    for (int local = 0; local < kRanksPerNode; ++local) {
      const long rank = static_cast<long>(n) * kRanksPerNode + local;
      const bool gone = dead && local == kVictimLocal;
      if (local) w.lit(",");
      w.lit(R"({"rank":)");
      w.num(rank);
      w.lit(R"(,"local_rank":)");
      w.num(local);
      w.lit(R"(,"world_size":)");
      w.num(world);
      w.lit(R"(,"pid":)");
      w.num(200'000L + rank);
      w.lit(gone ? R"(,"alive":false,"state":"?")"
                 : (dead ? R"(,"alive":true,"state":"S")" : R"(,"alive":true,"state":"R")"));
      w.lit(R"(,"status":"training","step":)");
      w.num(step);
      w.lit(R"(,"step_reports":)");
      w.num(step + 1);
      w.lit(R"(,"last_step_age_ms":)");
      w.num(age_ms);
      w.lit(R"(,"max_step_gap_ms":500,"overflow_total":0,"overflow_consecutive":0,"samples":)");
      w.num(step * 64);
      w.lit(R"(,"tokens":)");
      w.num(step * 64 * 4096);
      if (!gone) {
        w.lit(R"(,"cpu_s":)");
        w.fixed(300.0 + elapsed * 0.97, 2);
      }
      w.lit(R"(,"attempt":0,"run_id":"bench-frontier","node_rank":)");
      w.num(n);
      w.lit(R"(,"nonfinite_total":0,"loss":)");
      w.fixed(loss + 0.001 * local, 5);
      w.lit(R"(,"loss_scale":65536.0,"grad_norm":1.1,"checkpoint":{"state":"ok","step":800,"begin_age_ms":)");
      w.num(600'000L + elapsed_ms);
      w.lit(R"(,"duration_ms":20000,"last_ok_step":800,"last_ok_age_ms":)");
      w.num(580'000L + elapsed_ms);
      w.lit("}");
      if (dead) w.lit(R"(,"syscall":"futex")");
      if (gone) {
        w.lit(R"(,"gone_age_ms":)");
        w.num(static_cast<long>((now - kill_time_) * 1000.0));
        w.lit(R"(,"exit":{"signal":9,"signal_name":"SIGKILL","core_dumped":false,"oom_killed":false})");
      }
      w.lit("}");
    }
    w.lit(tail_);
  }

  const Options& o_;
  double job_t0_;
  double kill_time_ = -1.0;
  int victim_node_ = 0;
  std::string head_;
  std::string tail_;
  std::string request_line_;
};

struct Pending {
  int node;
  double due;
  bool kill_report;
};

enum class ConnState { kClosed, kConnecting, kIdle, kBusy };

struct Conn {
  int fd = -1;
  ConnState state = ConnState::kClosed;
  std::deque<Pending> queue;
  std::string out;
  std::size_t out_off = 0;
  std::string in;
  Pending current{};
  double sent_at = 0.0;
  bool want_write = false;
  long requests = 0;
  double retry_at = 0.0;  // after a failed connect, not before
};

// What one report came to.
enum Outcome : int { kOk = 0, k4xx, k5xx, kOtherStatus, kTimeout, kClosed, kConnectFailed, kOutcomes };
constexpr std::array<const char*, kOutcomes> kOutcomeNames = {"200",     "4xx",    "5xx",           "other",
                                                              "timeout", "closed", "connect_failed"};

struct Stats {
  std::array<long, kOutcomes> all{};     // every report, warm-up included
  std::array<long, kOutcomes> window{};  // reports due within the window
  std::array<long, kOutcomes> after{};   // reports due after it
  std::vector<float> latency_ms;         // due within the window and answered, from the due time
  std::vector<float> service_ms;         // the same, from the send
  std::vector<float> late_ms;            // sent within the window: how late after it was due
  long window_due = 0;                   // reports due within the window (offered)
  long window_done_ok = 0;               // 200 answers that arrived within the window (achieved)
  long sent = 0;
  long dropped = 0;         // a full queue: never sent
  long dropped_window = 0;  // of those, due within the window
  long connects = 0;
  long server_closes = 0;  // answered `Connection: close`
  long server_5xx = 0;     // 5xx answers in application/problem+json: the server's own
  double kill_sent = -1.0, kill_answered = -1.0;
  int kill_status = 0;
};

class Flood {
 public:
  explicit Flood(const Options& o)
      : o_(o), start_(now_s() + 0.2), job_(o, start_), conns_(static_cast<std::size_t>(o.connections)) {
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (ep_ < 0 || timer_ < 0) {
      std::perror("report_flood: epoll/timerfd");
      std::exit(1);
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kTimerTag;
    epoll_ctl(ep_, EPOLL_CTL_ADD, timer_, &ev);
    addr_.sin_family = AF_INET;
    addr_.sin_port = htons(static_cast<std::uint16_t>(o.port));
    if (inet_pton(AF_INET, o.host.c_str(), &addr_.sin_addr) != 1) usage("--host must be an IPv4 address");
    win_start_ = start_ + o.warmup;
    win_end_ = start_ + o.warmup + o.window;
    send_end_ = start_ + o.duration;
    const double expect = static_cast<double>(o.nodes) / o.period * o.window;
    stats_.latency_ms.reserve(static_cast<std::size_t>(expect * 1.05) + 16);
    stats_.service_ms.reserve(static_cast<std::size_t>(expect * 1.05) + 16);
    stats_.late_ms.reserve(static_cast<std::size_t>(expect * 1.05) + 16);
    seq_.assign(static_cast<std::size_t>(o.nodes), 0);
  }

  int run() {
    const double hard_end = send_end_ + o_.timeout + 1.0;
    double next_progress = start_ + 5.0;
    double next_timeout_scan = start_ + 0.1;
    std::array<epoll_event, 256> events{};
    // Bounded: one pass per wake-up, and wake-ups come at most once per due report, answer
    // or 100 ms; the loop ends at hard_end whatever is still queued.
    for (long pass = 0; pass < 100'000'000L; ++pass) {
      double now = now_s();
      if (now >= hard_end) break;
      mark_cpu(now);
      schedule_due(now);
      if (now >= send_end_ && idle()) break;
      if (now >= next_timeout_scan) {
        expire(now);
        next_timeout_scan = now + 0.1;
      }
      if (now >= next_progress) {
        progress(now);
        next_progress += 5.0;
      }
      arm_timer(std::min({next_due(), next_timeout_scan, next_progress, hard_end}));
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), 1000);
      if (n < 0 && errno != EINTR) {
        std::perror("report_flood: epoll_wait");
        return 1;
      }
      for (int i = 0; i < n; ++i) {
        if (events[static_cast<std::size_t>(i)].data.u64 == kTimerTag) {
          std::uint64_t ticks = 0;
          [[maybe_unused]] auto r = read(timer_, &ticks, sizeof ticks);
          continue;
        }
        on_event(events[static_cast<std::size_t>(i)].data.u64, events[static_cast<std::size_t>(i)].events);
      }
    }
    report();
    for (auto& c : conns_)
      if (c.fd >= 0) close(c.fd);
    return 0;
  }

 private:
  static constexpr std::uint64_t kTimerTag = ~std::uint64_t{0};

  double due_of(long j) const { return start_ + static_cast<double>(j) * o_.period / o_.nodes; }
  double next_due() const {
    double d = due_of(next_j_);
    if (kill_pending()) d = std::min(d, job_.kill_time());
    return d;
  }
  bool kill_pending() const {
    return job_.kill_time() > 0.0 && !kill_queued_ && job_.kill_time() < send_end_;
  }
  bool idle() const {
    for (const auto& c : conns_)
      if (c.state == ConnState::kBusy || c.state == ConnState::kConnecting || !c.queue.empty()) return false;
    return true;
  }

  void arm_timer(double at) {
    itimerspec its{};
    double sec = std::floor(at);
    its.it_value.tv_sec = static_cast<time_t>(sec);
    its.it_value.tv_nsec = static_cast<long>((at - sec) * 1e9);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    timerfd_settime(timer_, TFD_TIMER_ABSTIME, &its, nullptr);
  }

  // Queues every report that is due by `now`, then starts a send on each idle connection.
  void schedule_due(double now) {
    if (kill_pending() && now >= job_.kill_time()) {
      kill_queued_ = true;
      enqueue(Pending{job_.victim_node(), job_.kill_time(), true});
    }
    for (int k = 0; k < 1'000'000; ++k) {
      const double due = due_of(next_j_);
      if (due > now || due >= send_end_) break;
      const int node = static_cast<int>(next_j_ % o_.nodes);
      ++next_j_;
      if (due >= win_start_ && due < win_end_) ++stats_.window_due;
      enqueue(Pending{node, due, false});
    }
    for (std::size_t i = 0; i < conns_.size(); ++i) start_next(i, now);
  }

  void enqueue(const Pending& p) {
    auto& c = conns_[static_cast<std::size_t>(p.node % o_.connections)];
    if (c.queue.size() >= o_.max_queue) {
      ++stats_.dropped;
      if (p.due >= win_start_ && p.due < win_end_) ++stats_.dropped_window;
      return;
    }
    // The kill report goes first: the real agent sends it at once on its own connection, so
    // it must not wait behind its neighbours' backlog on this shared one.
    if (p.kill_report) {
      c.queue.push_front(p);
    } else {
      c.queue.push_back(p);
    }
  }

  void start_next(std::size_t i, double now) {
    auto& c = conns_[i];
    if (c.queue.empty()) return;
    if (c.state == ConnState::kClosed) {
      if (now >= c.retry_at) open(i, now);
      return;
    }
    if (c.state != ConnState::kIdle) return;
    c.current = c.queue.front();
    c.queue.pop_front();
    const auto node = static_cast<std::size_t>(c.current.node);
    job_.request(req_, body_, c.current.node, ++seq_[node], now);
    c.out = req_.str();
    c.out_off = 0;
    c.in.clear();
    c.state = ConnState::kBusy;
    c.sent_at = now;
    ++stats_.sent;
    if (c.current.due >= win_start_ && c.current.due < win_end_)
      stats_.late_ms.push_back(static_cast<float>((now - c.current.due) * 1000.0));
    if (c.current.kill_report) stats_.kill_sent = now - job_.kill_time();
    flush(i);
  }

  void open(std::size_t i, double now) {
    auto& c = conns_[i];
    c.sent_at = now;  // a connect's own deadline
    c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c.fd < 0) {
      std::perror("report_flood: socket");
      std::exit(1);
    }
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (o_.bind_sources) {
      sockaddr_in src{};
      src.sin_family = AF_INET;
      const std::uint32_t k = static_cast<std::uint32_t>(i) + 1;
      src.sin_addr.s_addr = htonl((127U << 24) | (10U << 16) | ((k / 256) << 8) | (k % 256));
      setsockopt(c.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind(c.fd, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) std::perror("report_flood: bind");
    }
    ++stats_.connects;
    c.state = ConnState::kConnecting;
    c.requests = 0;
    int r = connect(c.fd, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT;
    ev.data.u64 = i;
    c.want_write = true;
    epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
    if (r != 0 && errno != EINPROGRESS) fail_connect(i);
  }

  void fail_connect(std::size_t i) {
    auto& c = conns_[i];
    drop_fd(i);
    c.retry_at = now_s() + 0.1;
    // The report at the head of the queue could not go out: count it, keep the rest.
    if (!c.queue.empty()) {
      Pending p = c.queue.front();
      c.queue.pop_front();
      record(p, kConnectFailed, 0.0, now_s(), 0);
    }
  }

  void drop_fd(std::size_t i) {
    auto& c = conns_[i];
    if (c.fd >= 0) {
      epoll_ctl(ep_, EPOLL_CTL_DEL, c.fd, nullptr);
      close(c.fd);
    }
    c.fd = -1;
    c.state = ConnState::kClosed;
    c.want_write = false;
    c.in.clear();
    c.out.clear();
  }

  void set_write_interest(std::size_t i, bool want) {
    auto& c = conns_[i];
    if (c.want_write == want) return;
    epoll_event ev{};
    ev.events = EPOLLIN | (want ? EPOLLOUT : 0U);
    ev.data.u64 = i;
    epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_write = want;
  }

  void flush(std::size_t i) {
    auto& c = conns_[i];
    while (c.out_off < c.out.size()) {
      ssize_t w = send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
      if (w > 0) {
        c.out_off += static_cast<std::size_t>(w);
        continue;
      }
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        set_write_interest(i, true);
        return;
      }
      finish(i, kClosed, 0, now_s());
      return;
    }
    set_write_interest(i, false);
  }

  void on_event(std::uint64_t tag, std::uint32_t what) {
    const auto i = static_cast<std::size_t>(tag);
    auto& c = conns_[i];
    if (c.fd < 0) return;
    const double now = now_s();
    if (c.state == ConnState::kConnecting) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (what & (EPOLLERR | EPOLLHUP))) {
        fail_connect(i);
        return;
      }
      if (!(what & EPOLLOUT)) return;
      c.state = ConnState::kIdle;
      set_write_interest(i, false);
      start_next(i, now);
      return;
    }
    if ((what & EPOLLOUT) && c.state == ConnState::kBusy) flush(i);
    if (c.fd < 0) return;
    if (what & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_answer(i, now);
  }

  void read_answer(std::size_t i, double now) {
    auto& c = conns_[i];
    std::array<char, 16384> buf{};
    for (int k = 0; k < 64; ++k) {
      ssize_t r = recv(c.fd, buf.data(), buf.size(), 0);
      if (r > 0) {
        c.in.append(buf.data(), static_cast<std::size_t>(r));
        if (static_cast<std::size_t>(r) < buf.size()) break;
        continue;
      }
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (r < 0 && errno == EINTR) continue;
      // The peer closed (or reset) the connection.
      if (c.state == ConnState::kBusy) {
        finish(i, kClosed, 0, now);
      } else {
        drop_fd(i);
      }
      start_next(i, now);
      return;
    }
    if (c.state != ConnState::kBusy) {
      c.in.clear();  // nothing was asked: ignore it
      return;
    }
    std::size_t head_end = c.in.find("\r\n\r\n");
    if (head_end == std::string::npos) return;
    std::string_view head(c.in.data(), head_end);
    int status = 0;
    if (head.size() > 12 && head.substr(0, 5) == "HTTP/") {
      std::from_chars(head.data() + 9, head.data() + 12, status);
    }
    std::size_t body_len = 0;
    bool chunked = false, close_after = false, problem = false;
    for (std::size_t pos = head.find("\r\n"); pos != std::string_view::npos;) {
      std::size_t next = head.find("\r\n", pos + 2);
      std::string_view line =
          head.substr(pos + 2, next == std::string_view::npos ? std::string_view::npos : next - pos - 2);
      std::size_t colon = line.find(':');
      if (colon != std::string_view::npos) {
        std::string name(line.substr(0, colon));
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char ch) { return std::tolower(ch); });
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        std::string low(value);
        std::transform(low.begin(), low.end(), low.begin(),
                       [](unsigned char ch) { return std::tolower(ch); });
        if (name == "content-length") std::from_chars(value.data(), value.data() + value.size(), body_len);
        if (name == "transfer-encoding" && low.find("chunked") != std::string::npos) chunked = true;
        if (name == "connection" && low.find("close") != std::string::npos) close_after = true;
        if (name == "content-type" && low.find("problem+json") != std::string::npos) problem = true;
      }
      pos = next;
    }
    const std::size_t body_start = head_end + 4;
    if (chunked) {
      // Complete once the last chunk (size 0) and its trailer's empty line are in.
      if (c.in.find("\r\n0\r\n\r\n", body_start - 2) == std::string::npos) return;
    } else if (c.in.size() < body_start + body_len) {
      return;
    }
    const Outcome outcome = status == 200                     ? kOk
                            : (status >= 400 && status < 500) ? k4xx
                            : (status >= 500 && status < 600) ? k5xx
                                                              : kOtherStatus;
    ++c.requests;
    if (close_after) ++stats_.server_closes;
    // A 5xx in the server's own problem+json, not a proxy's page (HAProxy's "no server").
    if (outcome == k5xx && problem) ++stats_.server_5xx;
    finish(i, outcome, status, now);
    if (close_after) drop_fd(i);
    start_next(i, now);
  }

  // The current request of connection i ended with `outcome` at `now`.
  void finish(std::size_t i, Outcome outcome, int status, double now) {
    auto& c = conns_[i];
    record(c.current, outcome, c.sent_at, now, status);
    if (outcome == kClosed || outcome == kTimeout) {
      drop_fd(i);
    } else {
      c.state = ConnState::kIdle;
      c.in.clear();
    }
  }

  void record(const Pending& p, Outcome outcome, double sent_at, double now, int status) {
    ++stats_.all[outcome];
    const bool in_window = p.due >= win_start_ && p.due < win_end_;
    if (p.kill_report) {
      stats_.kill_answered = now - job_.kill_time();
      stats_.kill_status = status;
    }
    if (outcome == kOk && now >= win_start_ && now < win_end_) ++stats_.window_done_ok;
    if (p.due >= win_end_ && !p.kill_report) ++stats_.after[outcome];
    if (!in_window || p.kill_report) return;
    ++stats_.window[outcome];
    if (outcome <= kOtherStatus) {
      stats_.latency_ms.push_back(static_cast<float>((now - p.due) * 1000.0));
      stats_.service_ms.push_back(static_cast<float>((now - sent_at) * 1000.0));
    }
  }

  void expire(double now) {
    for (std::size_t i = 0; i < conns_.size(); ++i) {
      auto& c = conns_[i];
      if (c.state == ConnState::kBusy && now - c.sent_at > o_.timeout) {
        finish(i, kTimeout, 0, now);
        start_next(i, now);
      } else if (c.state == ConnState::kConnecting && now - c.sent_at > o_.timeout) {
        fail_connect(i);
      }
    }
  }

  long queued() const {
    long q = 0;
    for (const auto& c : conns_) q += static_cast<long>(c.queue.size());
    return q;
  }

  void progress(double now) {
    long busy = 0;
    for (const auto& c : conns_) busy += c.state == ConnState::kBusy ? 1 : 0;
    std::fprintf(stderr,
                 "[report_flood] t=%.0fs sent %ld: 200 %ld, 4xx %ld, 5xx %ld, timeout %ld, closed %ld, "
                 "connect_failed %ld; in flight %ld, queued %ld, dropped %ld\n",
                 now - start_, stats_.sent, stats_.all[kOk], stats_.all[k4xx], stats_.all[k5xx],
                 stats_.all[kTimeout], stats_.all[kClosed], stats_.all[kConnectFailed], busy, queued(),
                 stats_.dropped);
  }

  static std::string pct_json(std::vector<float>& v, long unanswered) {
    // Percentiles over every report of the window; one never answered counts as infinitely
    // late, so a percentile that falls among them is null.
    std::sort(v.begin(), v.end());
    const double n = static_cast<double>(v.size()) + static_cast<double>(unanswered);
    auto at = [&](double p) -> std::string {
      if (n <= 0) return "null";
      auto k = static_cast<std::size_t>(std::max(0.0, std::ceil(p / 100.0 * n) - 1.0));
      if (k >= v.size()) return "null";
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", static_cast<double>(v[k]));
      return b;
    };
    std::string out = "{\"p50\":" + at(50) + ",\"p99\":" + at(99) + ",\"p999\":" + at(99.9) + ",\"max\":";
    out += unanswered > 0 || v.empty() ? std::string("null") : at(100);
    return out + "}";
  }

  void report() {
    const double window = o_.window;
    cpu_end_ = cpu_s();
    long unsent = queued();  // still waiting for a connection at the end: never sent
    long unsent_window = 0;
    for (const auto& c : conns_)
      for (const auto& p : c.queue)
        if (p.due >= win_start_ && p.due < win_end_ && !p.kill_report) ++unsent_window;
    long in_flight_window = 0;
    for (const auto& c : conns_)
      if (c.state == ConnState::kBusy && c.current.due >= win_start_ && c.current.due < win_end_)
        ++in_flight_window;
    long answered = 0;
    for (int k = kOk; k <= kOtherStatus; ++k) answered += stats_.window[static_cast<std::size_t>(k)];
    const long unanswered = stats_.window_due - answered;
    std::string by_status, by_status_all, by_status_after;
    for (int k = 0; k < kOutcomes; ++k) {
      const auto u = static_cast<std::size_t>(k);
      char b[64];
      std::snprintf(b, sizeof b, "%s\"%s\":%ld", k ? "," : "", kOutcomeNames[u], stats_.window[u]);
      by_status += b;
      std::snprintf(b, sizeof b, "%s\"%s\":%ld", k ? "," : "", kOutcomeNames[u], stats_.all[u]);
      by_status_all += b;
      std::snprintf(b, sizeof b, "%s\"%s\":%ld", k ? "," : "", kOutcomeNames[u], stats_.after[u]);
      by_status_after += b;
    }
    std::string lat = pct_json(stats_.latency_ms, unanswered);
    std::string svc = pct_json(stats_.service_ms, 0);
    std::string late = pct_json(stats_.late_ms, 0);
    double wall = now_s() - start_;
    std::printf(
        "{\"bench\":\"report_flood\",\"job\":\"%s\",\"nodes\":%d,\"ranks\":%ld,\"period_s\":%g,\"connections\":%d,"
        "\"warmup_s\":%g,\"window_s\":%g,\"sent\":%ld,\"window\":{\"due\":%ld,%s,\"dropped\":%ld,\"unsent\":%ld,"
        "\"in_flight_at_end\":%ld},\"after\":{%s},\"all\":{%s,\"dropped\":%ld,\"unsent\":%ld},\"offered_rps\":%.1f,"
        "\"achieved_rps\":%.1f,\"latency_ms\":%s,\"service_ms\":%s,\"late_ms\":%s,\"connects\":%ld,"
        "\"server_closes\":%ld,\"server_5xx\":%ld,\"kill\":{\"at_s\":%g,\"sent_s\":%.3f,\"answered_s\":%.3f,\"status\":%d},"
        "\"cpu_s\":%.3f,\"cpu_window_s\":%.3f,\"cores_window\":%.3f,\"wall_s\":%.2f}\n",
        o_.job.c_str(), o_.nodes, static_cast<long>(o_.nodes) * kRanksPerNode, o_.period, o_.connections,
        o_.warmup, window, stats_.sent, stats_.window_due, by_status.c_str(), stats_.dropped_window,
        unsent_window, in_flight_window, by_status_after.c_str(), by_status_all.c_str(), stats_.dropped,
        unsent, static_cast<double>(stats_.window_due) / window,
        static_cast<double>(stats_.window_done_ok) / window, lat.c_str(), svc.c_str(), late.c_str(),
        stats_.connects, stats_.server_closes, stats_.server_5xx, o_.kill_at, stats_.kill_sent,
        stats_.kill_answered, stats_.kill_status, cpu_end_, cpu_window(), cpu_window() / window, wall);
    std::fflush(stdout);
  }

  double cpu_window() const {
    return (cpu_at_end_window_ >= 0 ? cpu_at_end_window_ : cpu_end_) - std::max(0.0, cpu_at_window_);
  }

  // Marks this process's CPU when the window opens and when it closes.
  void mark_cpu(double now) {
    if (cpu_at_window_ < 0 && now >= win_start_) cpu_at_window_ = cpu_s();
    if (cpu_at_end_window_ < 0 && now >= win_end_) cpu_at_end_window_ = cpu_s();
  }

  const Options& o_;
  double start_;
  Job job_;
  std::vector<Conn> conns_;
  std::vector<long> seq_;
  sockaddr_in addr_{};
  int ep_ = -1, timer_ = -1;
  double win_start_ = 0, win_end_ = 0, send_end_ = 0;
  long next_j_ = 0;
  bool kill_queued_ = false;
  Writer req_, body_;
  Stats stats_;
  double cpu_at_window_ = -1.0, cpu_at_end_window_ = -1.0, cpu_end_ = 0.0;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  Flood flood(o);
  return flood.run();
}
