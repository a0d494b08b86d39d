#include "api/metrics_page.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <variant>

#include "core/prometheus.h"

namespace trainwatch::api {
namespace {

// Process metrics with the names Prometheus' client libraries use, read from procfs.
void write_process_metrics(PrometheusWriter& w) {
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may contain spaces) start after the last ')'.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> f((std::istream_iterator<std::string>(fields)),
                             std::istream_iterator<std::string>());
  if (f.size() < 22) return;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // f[0] is field 3 (state): utime is field 14, stime 15, starttime 22, rss 24.
  const double cpu = (std::stod(f[11]) + std::stod(f[12])) / ticks;
  const double rss = std::stod(f[21]) * page;

  double boot_time = 0;
  std::ifstream proc_stat("/proc/stat");
  for (std::string line; std::getline(proc_stat, line);) {
    if (line.rfind("btime ", 0) == 0) boot_time = std::stod(line.substr(6));
  }
  size_t fds = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }

  w.family("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
  w.sample("process_cpu_seconds_total", {}, cpu);
  w.family("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  w.sample("process_resident_memory_bytes", {}, rss);
  w.family("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
  w.sample("process_start_time_seconds", {}, boot_time + std::stod(f[19]) / ticks);
  w.family("process_open_fds", "gauge", "Number of open file descriptors.");
  w.sample("process_open_fds", {}, static_cast<double>(fds));
}

// The store's failed writes and what they cost: pings refused, results not recorded,
// state changes waiting to be stored.
void write_store_health(PrometheusWriter& w, const engine::EngineStats& stats, const Store* store) {
  if (store == nullptr) return;
  const WriteHealth health = store->write_health();
  w.family("trainwatch_store_write_failures_total", "counter", "Writes the store did not commit, by reason.");
  for (const char* reason : {"disk_full", "io_error", "read_only", "busy", "queue_full"}) {
    auto it = health.failures_by_reason.find(reason);
    w.sample("trainwatch_store_write_failures_total", {{"reason", reason}},
             static_cast<double>(it == health.failures_by_reason.end() ? 0 : it->second));
  }
  for (const auto& [reason, count] : health.failures_by_reason) {
    const std::string_view r = reason;
    if (r == "disk_full" || r == "io_error" || r == "read_only" || r == "busy" || r == "queue_full") continue;
    w.sample("trainwatch_store_write_failures_total", {{"reason", reason}}, static_cast<double>(count));
  }
  w.family("trainwatch_store_writable", "gauge", "0 while the store refuses writes (a full disk), else 1.");
  w.sample("trainwatch_store_writable", {}, health.refusing ? 0 : 1);
  w.family("trainwatch_pings_refused_total", "counter",
           "Pings answered 503 because the store did not commit them.");
  w.sample("trainwatch_pings_refused_total", {},
           static_cast<double>(health.failed_pings + stats.pings_refused));
  w.family("trainwatch_check_results_dropped_total", "counter", "Check results that were not recorded.");
  w.sample("trainwatch_check_results_dropped_total", {},
           static_cast<double>(health.failed_results + stats.results_dropped));
  w.family("trainwatch_store_done_callback_errors_total", "counter",
           "Write callbacks that threw (a bug): logged, and the writer went on.");
  w.sample("trainwatch_store_done_callback_errors_total", {}, static_cast<double>(health.done_exceptions));
  w.family("trainwatch_state_changes_waiting", "gauge",
           "State changes decided and not yet stored (or shown).");
  w.sample("trainwatch_state_changes_waiting", {}, static_cast<double>(stats.changes_waiting));
}

}  // namespace

std::string render_metrics(const engine::Engine& engine, const Store* store) {
  PrometheusWriter w;
  auto views = engine.monitors();
  w.family("trainwatch_monitor_up", "gauge",
           "1 when the monitor is up, 0 when down, -1 when pending or paused.");
  for (const auto& v : views) {
    double value = v.state.status == MonitorStatus::kUp ? 1 : v.state.status == MonitorStatus::kDown ? 0 : -1;
    w.sample("trainwatch_monitor_up", {{"monitor", v.config->name}, {"type", to_string(v.config->type)}},
             value);
  }
  w.family("trainwatch_monitor_status_since_timestamp_seconds", "gauge",
           "When the monitor entered its current status.");
  for (const auto& v : views) {
    w.sample("trainwatch_monitor_status_since_timestamp_seconds", {{"monitor", v.config->name}},
             static_cast<double>(to_unix_ms(v.state.since)) / 1000.0);
  }

  w.family("trainwatch_heartbeat_last_ping_timestamp_seconds", "gauge",
           "When the heartbeat monitor's newest ping arrived.");
  for (const auto& v : views) {
    if (!v.heartbeat || !v.heartbeat->last_ping) continue;
    w.sample("trainwatch_heartbeat_last_ping_timestamp_seconds", {{"monitor", v.config->name}},
             static_cast<double>(to_unix_ms(v.heartbeat->last_ping->ping.at)) / 1000.0);
  }
  // What a "late" rule compares the last ping with, so that no rule repeats the config's
  // numbers. A cron heartbeat has no period (its due times are not evenly spaced).
  w.family("trainwatch_heartbeat_period_seconds", "gauge",
           "The expected time between pings (heartbeats with a period).");
  for (const auto& v : views) {
    const auto* spec = std::get_if<HeartbeatSpec>(&v.config->spec);
    if (spec == nullptr || spec->schedule) continue;
    w.sample("trainwatch_heartbeat_period_seconds", {{"monitor", v.config->name}},
             static_cast<double>(spec->period.count()) / 1000.0);
  }
  w.family("trainwatch_heartbeat_grace_seconds", "gauge",
           "Extra time after a missed due time before the heartbeat is late.");
  for (const auto& v : views) {
    const auto* spec = std::get_if<HeartbeatSpec>(&v.config->spec);
    if (spec == nullptr) continue;
    w.sample("trainwatch_heartbeat_grace_seconds", {{"monitor", v.config->name}},
             static_cast<double>(spec->grace.count()) / 1000.0);
  }

  engine::CheckMetrics metrics = engine.metrics();
  w.family("trainwatch_checks_total", "counter", "Checks run, by monitor and result.");
  for (const auto& [name, counts] : metrics.by_monitor) {
    w.sample("trainwatch_checks_total", {{"monitor", name}, {"result", "success"}},
             static_cast<double>(counts.success));
    w.sample("trainwatch_checks_total", {{"monitor", name}, {"result", "failure"}},
             static_cast<double>(counts.failure));
  }
  w.family("trainwatch_check_duration_seconds", "histogram", "How long checks took, by monitor type.");
  const std::vector<double> bounds(engine::DurationHistogram::kBoundsSeconds.begin(),
                                   engine::DurationHistogram::kBoundsSeconds.end());
  for (const auto& [type, h] : metrics.duration_by_type) {
    w.histogram("trainwatch_check_duration_seconds", {{"type", type}}, bounds,
                std::vector<uint64_t>(h.cumulative.begin(), h.cumulative.end()), h.sum_seconds, h.count);
  }

  engine::EngineStats stats = engine.stats();
  w.family("trainwatch_checks_in_flight", "gauge", "Checks running now.");
  w.sample("trainwatch_checks_in_flight", {}, static_cast<double>(stats.checks_in_flight));
  w.family("trainwatch_checks_waiting", "gauge",
           "Checks due but waiting for a free slot (server.max_checks_in_flight).");
  w.sample("trainwatch_checks_waiting", {}, static_cast<double>(stats.checks_waiting));
  w.family("trainwatch_check_max_start_delay_seconds", "gauge",
           "Worst lateness of a check's start against its schedule.");
  w.sample("trainwatch_check_max_start_delay_seconds", {}, stats.max_start_delay_ms / 1000.0);
  w.family("trainwatch_store_dropped_writes_total", "counter",
           "Writes dropped because the store's queue was full.");
  w.sample("trainwatch_store_dropped_writes_total", {}, static_cast<double>(stats.store_dropped_writes));
  write_store_health(w, stats, store);

  write_process_metrics(w);
  return w.take();
}

}  // namespace trainwatch::api
