#include "agent/agent.h"

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_set>
#include <utility>

#include <sys/types.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "agent/child_stacks.h"
#include "agent/exit_watch.h"
#include "agent/gpu_ranks.h"
#include "agent/native_capture.h"
#include "agent/oom_watch.h"
#include "agent/own_threads.h"
#include "agent/probe_worker.h"
#include "agent/rank_samples.h"
#include "agent/report_pusher.h"
#include "agent/stack_capture.h"
#include "agent/wait_point.h"
#include "core/names.h"
#include "core/utf8.h"
#include "http/server.h"
#include "reporter/process_info.h"
#include "reporter/slot_check.h"
#include "reporter/slot_dir.h"
#include "reporter/slot_file.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::agent {
namespace {

using reporter::ReadResult;
using reporter::SlotFile;
using reporter::SlotSnapshot;

struct RendezvousTarget {
  std::mutex mu;
  std::string host;
  int port = 0;
};

// What the sampler remembers about a slot between samples, to see steps advance.
struct Track {
  uint64_t owner = 0;
  uint64_t step_reports = 0;
  int64_t last_step_ms = 0;
  uint64_t anchor_reports = 0;
  MonoTime anchor_time{};
  double rate = 0;
  // Stacks on a hang (stack_capture.h): the rank's usual gap between steps, which rises
  // at once and decays slowly, and the capture taken at the current step.
  double usual_gap_ms = 0;
  bool captured = false;  // at the current step
  std::shared_ptr<const PyStack> stack;
  int64_t stack_ms = 0;
  std::string stack_note;
  std::shared_ptr<const NativeStack> native;
  std::string native_note;
  // Its DataLoader workers' stacks, taken with its own (child_stacks.h); null when none came.
  std::shared_ptr<const std::vector<ChildPyStack>> children;
  // How its process ended (exit_watch.h), the OOM-kill counts while it lived (oom_watch.h),
  // and its resident memory when last seen alive.
  std::optional<ProcessExit> exit;
  bool exit_sought = false;  // looked for once it was seen gone: the kernel had said by then
  OomBaseline oom;
  // Resident memory at the last two samples that saw it alive: a process the OOM killer
  // ended can show its memory already freed at the last, still alive while it exits.
  uint64_t rss_bytes = 0, rss_before = 0;
  CollectiveTime collective_time;
  // The latest run of non-finite losses (slot_layout.h): its step_reports ordinal, which
  // names the run, and when this agent first saw it.
  uint64_t nonfinite_run = 0;
  int64_t nonfinite_first_ms = 0;
};

// A rank is asked for its stack once per step, when that step is overdue: more than
// kStackGapFactor x its usual gap and at least kStackMinStale old. The server's step
// timeout is 5 x the gap with a floor (learned_timeouts.h), so the stack is in the
// report that precedes the alert.
constexpr double kStackGapFactor = 2.5;
constexpr int64_t kStackMinStaleMs = 1'000;
constexpr double kGapDecay = 0.95;

bool stack_overdue(const RankView& v, const Track& t, int64_t now_ms) {
  if (t.captured || !v.alive || v.slot.step_reports == 0 || t.last_step_ms == 0) return false;
  if (v.slot.status != TW_STATUS_TRAINING || (v.state != 'S' && v.state != 'R')) return false;
  const double stale_ms = static_cast<double>(now_ms - t.last_step_ms);
  return stale_ms > std::max(static_cast<double>(kStackMinStaleMs), kStackGapFactor * t.usual_gap_ms);
}

constexpr Millis kRateWindow{5'000};
// A writer holds a slot's seqlock for a few stores; a slot found busy this many samples in
// a row (a second at the default interval) without ever being read whole is invalid.
constexpr int kBusySamples = 5;

using SlotKey = std::pair<uid_t, uint32_t>;

class AgentImpl final : public Agent {
 public:
  AgentImpl(AgentOptions options, const Clock& clock)
      : options_(std::move(options)),
        clock_(clock),
        nvml_(std::make_shared<NvmlProbe>(options_.nvml_library, clock)),
        fabric_(std::make_shared<FabricWatch>(options_.sysfs_root, clock)),
        gpu_ranks_(options_.proc_root),
        rendezvous_target_(std::make_shared<RendezvousTarget>()),
        nvml_worker_(clock, options_.probe_deadline, [p = nvml_] { return p->probe(); }),
        fabric_worker_(clock, options_.probe_deadline, [f = fabric_] { return f->probe(); }),
        disk_worker_(clock, options_.probe_deadline, [paths = options_.disks] { return probe_disks(paths); }),
        memory_worker_(clock, options_.probe_deadline,
                       [path = options_.meminfo_path] { return probe_memory(path); }),
        rendezvous_worker_(clock, options_.probe_deadline,
                           [t = rendezvous_target_, d = options_.probe_deadline] {
                             std::string host;
                             int port = 0;
                             {
                               std::lock_guard lock(t->mu);
                               host = t->host;
                               port = t->port;
                             }
                             if (port == 0) return RendezvousInfo{};
                             return probe_rendezvous(host, port, std::min(d, Millis{2'000}));
                           }) {}

  ~AgentImpl() override { stop(); }

  Status start(bool serve_http, bool run_threads) {
    exit_watch_ = ExitWatch::open(exit_watch_note_);
    if (options_.native_stacks) {
      // Once: a tool installed later is picked up by the next agent, not mid-run.
      const char* path = std::getenv("PATH");
      native_tool_ = find_on_path(options_.native_tool, path ? path : "/usr/bin:/bin");
    }
    if (!options_.server_url.empty()) {
      auto pusher = ReportPusher::start(
          PushOptions{options_.server_url, options_.token, options_.node, options_.report_every,
                      std::min(options_.report_every, Millis{3'000})},
          clock_);
      if (!pusher) return pusher.error();
      pusher_ = std::move(*pusher);
    }
    sample_once();
    if (serve_http) {
      auto router = std::make_shared<http::Router>();
      router->add("GET", "/health", [this](const http::Request&, const http::Responder& respond) {
        auto r = current();
        respond(http::Response::json(r->status, r->health_json));
      });
      router->add("GET", "/metrics", [this](const http::Request&, const http::Responder& respond) {
        auto r = current();
        http::Response resp = http::Response::text(200, r->metrics);
        resp.content_type = "text/plain; version=0.0.4; charset=utf-8";
        respond(std::move(resp));
      });
      http::ServerOptions so;
      so.host = options_.host;
      so.port = options_.port;
      so.max_connections = 1024;
      auto server = http::Server::start(io_, so, router);
      if (!server) return server.error();
      server_ = *server;
      http_thread_ = std::thread([this] {
        register_own_thread();
        io_.run();
      });
    }
    if (run_threads) {
      sampler_ = std::thread([this] {
        register_own_thread();
        sample_loop();
      });
    }
    return Ok{};
  }

  uint16_t port() const override { return server_ ? server_->port() : 0; }

  std::shared_ptr<const Rendered> current() const override {
    std::lock_guard lock(published_mu_);
    return published_;
  }

  bool wait_probes_idle(Millis limit) override {
    return nvml_worker_.wait_idle(limit) && fabric_worker_.wait_idle(limit) &&
           disk_worker_.wait_idle(limit) && memory_worker_.wait_idle(limit) &&
           rendezvous_worker_.wait_idle(limit);
  }

  void stop() override {
    {
      std::lock_guard lock(stop_mu_);
      if (stopped_) return;
      stopped_ = true;
      stop_cv_.notify_all();
    }
    if (sampler_.joinable()) sampler_.join();
    if (pusher_) {
      // The last report: what the ranks look like as this agent (perhaps with its host
      // process) goes away, so the server hears who failed first.
      sample_once();
      pusher_->finish();
    }
    if (server_) server_->stop();
    work_.reset();
    io_.stop();
    if (http_thread_.joinable()) http_thread_.join();
  }

  void sample_once() override {
    std::lock_guard sample_lock(sample_mu_);
    MonoTime mono = clock_.monotonic_time();
    NodeSnapshot node;
    node.job = options_.job;
    node.now_ms = to_unix_ms(clock_.system_time());
    node.probe_deadline = options_.probe_deadline;
    node.nvml_enabled = options_.nvml;
    tracked_pids_.clear();
    for (const auto& [key, t] : tracks_) tracked_pids_.insert(reporter::owner_pid(t.owner));
    // Every sample, so the kernel's queue of the host's exits never overflows.
    if (exit_watch_) exit_watch_->drain([this](int32_t pid) { return tracked_pids_.contains(pid); });
    oom_kills_ = read_oom_kill_count(options_.proc_root);
    oom_watch_.drain();
    own_cpu_ticks_ = own_threads_cpu_ticks(options_.proc_root);
    read_ranks(node, mono);

    // Point the rendezvous probe at what the ranks reported.
    for (const auto& r : node.ranks) {
      if (r.alive && r.slot.master_port > 0) {
        std::lock_guard lock(rendezvous_target_->mu);
        rendezvous_target_->host = r.slot.master_addr;
        rendezvous_target_->port = r.slot.master_port;
        break;
      }
    }
    if (!probed_once_ || mono - last_probe_ >= options_.probe_interval) {
      probed_once_ = true;
      last_probe_ = mono;
      if (options_.nvml) nvml_worker_.kick();
      fabric_worker_.kick();
      disk_worker_.kick();
      memory_worker_.kick();
      if (options_.rendezvous) rendezvous_worker_.kick();
    }
    copy_probe(nvml_worker_, node.nvml);
    copy_probe(fabric_worker_, node.fabric);
    copy_probe(disk_worker_, node.disks);
    copy_probe(memory_worker_, node.memory);
    copy_probe(rendezvous_worker_, node.rendezvous);
    if (!options_.nvml) node.nvml = {};
    if (node.nvml.hung) {
      const char* call = nvml_->call_in_flight();
      node.nvml_call = call ? call : "";
    }
    gpu_ranks_.assign(node);

    if (pusher_) pusher_->offer(node);
    auto rendered = std::make_shared<const Rendered>(render(node, options_.thresholds));
    std::lock_guard lock(published_mu_);
    published_ = std::move(rendered);
  }

 private:
  template <typename T>
  static void copy_probe(const ProbeWorker<T>& worker, ProbeView<T>& view) {
    auto s = worker.snapshot();
    view.value = std::move(s.last);
    view.hung = s.hung;
    view.in_flight_for = s.in_flight_for;
  }

  // Samples every sample_interval, and between samples looks at which ranks are in a
  // collective every activity_interval on average, each wait drawn from 0.5 to 1.5 of it: a
  // rank whose steps take a multiple of the interval would otherwise be found at the same
  // point of its step every time, and its sampled time in collectives would say nothing
  // true. A look costs one word a rank; twenty-five a second make the share of a rank's time
  // in collectives good to a few percent within seconds, where five a second took a minute.
  void sample_loop() {
    std::minstd_rand jitter(static_cast<uint32_t>(::getpid()));
    std::uniform_real_distribution<double> share(0.5, 1.5);
    const bool looks =
        options_.activity_interval.count() > 0 && options_.activity_interval < options_.sample_interval;
    std::unique_lock lock(stop_mu_);
    while (!stopped_) {
      lock.unlock();
      sample_once();
      lock.lock();
      const auto next_sample = std::chrono::steady_clock::now() + options_.sample_interval;
      while (!stopped_) {
        const auto wait = std::chrono::duration_cast<Millis>(
            (looks ? options_.activity_interval : options_.sample_interval) * share(jitter));
        const auto until = std::min(next_sample, std::chrono::steady_clock::now() + wait);
        if (stop_cv_.wait_until(lock, until, [&] { return stopped_; }) || until == next_sample) break;
        lock.unlock();
        look_at_activity();
        lock.lock();
      }
    }
  }

  // Between samples: which ranks of the slots already tracked are in a collective now.
  void look_at_activity() {
    std::lock_guard sample_lock(sample_mu_);
    const int64_t now_ms = to_unix_ms(clock_.system_time());
    for (const auto& user : reporter::list_slot_files(options_.dir, options_.job, nullptr)) {
      auto file = SlotFile::open_for_reading(user.path, user.uid);
      if (!file) continue;
      for (auto& [key, t] : tracks_) {
        if (key.first != user.uid || !t.collective_time.known()) continue;
        const reporter::Slot* slot = file->slot(key.second);
        if (slot->owner.load(std::memory_order_acquire) != t.owner) continue;
        const uint64_t activity = slot->activity.load(std::memory_order_relaxed);
        t.collective_time.sample(true, (activity & reporter::kActivityInside) != 0, now_ms);
      }
      if (!file->intact()) return;  // shrunk while read: what was read is not the ranks'
    }
  }

  // Copies every claimed slot of one user's file into views, updating each slot's Track.
  void read_file(const SlotFile& file, uid_t uid, NodeSnapshot& node, MonoTime mono,
                 std::vector<RankView>& views) {
    for (uint32_t i = 0; i < reporter::kSlotCount; ++i) {
      RankView v;
      SlotKey key{uid, i};
      ReadResult rr = reporter::read_slot(*file.slot(i), &v.slot, 64);
      if (rr == ReadResult::kEmpty) continue;
      if (rr == ReadResult::kBusy) {
        // Writer mid-update for the whole retry budget: keep the last view of it. A slot
        // never read whole that stays so for kBusySamples samples is no slot a writer keeps
        // (one that died mid-update, or bytes that are not a slot): say so.
        if (auto it = last_views_.find(key); it != last_views_.end()) {
          views.push_back(it->second);
        } else if (int busy = ++busy_samples_[key]; busy >= kBusySamples) {
          std::string note = "slot " + std::to_string(i) + " of " + file.path() +
                             " is invalid (its sequence number has stayed odd for " +
                             std::to_string(kBusySamples) + " samples or more): not read as a rank";
          if (busy == kBusySamples) std::fprintf(stderr, "trainwatch agent: %s\n", note.c_str());
          node.invalid_slots.push_back(std::move(note));
        }
        continue;
      }
      busy_samples_.erase(key);
      if (!slot_valid(file, key, v.slot, node)) continue;
      auto info = reporter::read_process(v.slot.pid, options_.proc_root);
      v.alive = !reporter::is_dead(info, v.slot.start_ticks);
      v.state = v.alive ? info->state : '?';
      v.cpu_ticks = v.alive ? info->cpu_ticks : 0;
      // Hosted in this rank (trainwatch.init(server=...)): its threads are not the rank's work.
      if (v.alive && v.slot.pid == self_pid_) v.cpu_ticks -= std::min(v.cpu_ticks, own_cpu_ticks_);
      Track& t = tracks_[key];
      if (t.owner != v.slot.owner) {
        t = Track{};
        t.owner = v.slot.owner;
        t.step_reports = v.slot.step_reports;
        t.anchor_reports = v.slot.step_reports;
        t.anchor_time = mono;
        if (v.slot.step_reports > 0) t.last_step_ms = node.now_ms;  // first sight: at least this recent
      } else if (v.slot.step_reports != t.step_reports) {
        const auto gap = static_cast<double>(node.now_ms - t.last_step_ms);
        if (t.last_step_ms > 0) t.usual_gap_ms = std::max(gap, t.usual_gap_ms * kGapDecay);
        t.step_reports = v.slot.step_reports;
        t.last_step_ms = node.now_ms;
        t.captured = false;
        t.stack.reset();
        t.stack_note.clear();
        t.native.reset();
        t.native_note.clear();
        t.children.reset();
      }
      if (mono - t.anchor_time >= kRateWindow) {
        double secs = std::chrono::duration<double>(mono - t.anchor_time).count();
        t.rate = static_cast<double>(v.slot.step_reports - t.anchor_reports) / secs;
        t.anchor_reports = v.slot.step_reports;
        t.anchor_time = mono;
      }
      note_exit(v, t, info);
      t.collective_time.sample(v.slot.has_activity && v.slot.collectives > 0,
                               (v.slot.activity & reporter::kActivityInside) != 0, node.now_ms);
      v.collective_wait_ms = t.collective_time.wait_ms();
      v.collective_sampled_ms = t.collective_time.sampled_ms();
      if (v.slot.has_nonfinite && v.slot.nonfinite_total > 0) {
        if (t.nonfinite_first_ms == 0 || t.nonfinite_run != v.slot.nonfinite_first_report) {
          t.nonfinite_run = v.slot.nonfinite_first_report;
          t.nonfinite_first_ms = node.now_ms;  // first sight: the run began within the last sample
        }
        v.nonfinite_first_ms = t.nonfinite_first_ms;
      }
      v.last_step_ms = t.last_step_ms;
      v.steps_per_s = t.rate;
      if (v.alive) v.wait = read_wait_point(v.slot.pid, options_.proc_root);
      if (stack_overdue(v, t, node.now_ms)) {
        stack_wanted_.push_back(
            {views.size(), key,
             StackTarget{v.slot.pid, uid, stack_file_path(options_.dir, uid, options_.job, v.slot.pid)}});
      }
      copy_stacks(t, v);
      last_views_[key] = v;
      views.push_back(std::move(v));
    }
  }

  // Checks a copied slot against its invariants (reporter/slot_check.h) and, for the owner
  // seen before, against its last copy. An invalid slot is no rank: it is dropped from the
  // tracks, noted in the snapshot every sample while it stays so, and logged once per owner.
  // It stays invalid until another process claims the slot.
  bool slot_valid(const SlotFile& file, const SlotKey& key, SlotSnapshot& slot, NodeSnapshot& node) {
    auto known = invalid_.find(key);
    std::string problem;
    if (known != invalid_.end() && known->second.owner == slot.owner) {
      problem = known->second.problem;
    } else {
      problem = reporter::slot_problem(slot, key.second);
      auto last = last_views_.find(key);
      if (problem.empty() && last != last_views_.end() && last->second.slot.owner == slot.owner)
        problem = reporter::slot_regression(last->second.slot, slot);
    }
    if (problem.empty()) {
      if (known != invalid_.end()) invalid_.erase(known);
      reporter::repair_slot_text(slot);
      return true;
    }
    std::string note = "slot " + std::to_string(key.second) + " of " + file.path() + " is invalid (" +
                       utf8_repaired(problem) + "): not read as a rank";
    if (known == invalid_.end() || known->second.owner != slot.owner) {
      std::fprintf(stderr, "trainwatch agent: %s\n", note.c_str());
      invalid_[key] = {slot.owner, problem};
    }
    node.invalid_slots.push_back(std::move(note));
    tracks_.erase(key);
    last_views_.erase(key);
    return false;
  }

  // While the rank lives, its OOM-kill counts and memory; once it is gone, how it ended:
  // what the kernel's process events said (it says so before the process can be seen gone,
  // so reading what is queued now finds it), else what a zombie's stat still says (an
  // agent that took the role over after its host died heard no event of that death).
  void note_exit(RankView& v, Track& t, const std::optional<reporter::ProcessInfo>& info) {
    if (v.alive) {
      t.oom.alive(oom_kills_, oom_watch_.cgroup_kills(v.slot.pid));
      t.rss_before = t.rss_bytes;
      if (info) t.rss_bytes = info->rss_pages * page_size_;
      v.rss_bytes = t.rss_bytes;
      return;
    }
    v.rss_bytes = std::max(t.rss_bytes, t.rss_before);
    if (!t.exit_sought) {
      t.exit_sought = true;
      std::optional<uint32_t> status;
      if (exit_watch_) {
        status = exit_watch_->take(v.slot.pid);
        if (!status) {
          tracked_pids_.insert(v.slot.pid);
          exit_watch_->drain([this](int32_t pid) { return tracked_pids_.contains(pid); });
          status = exit_watch_->take(v.slot.pid);
        }
      }
      if (!status && info && info->state == 'Z' && info->start_ticks == v.slot.start_ticks)
        status = info->exit_status;
      if (status) {
        t.exit = exit_from_wait_status(*status);
        t.exit->oom_killed =
            t.exit->signal == SIGKILL && (oom_watch_.logged_kill(v.slot.pid) ||
                                          t.oom.rose(oom_kills_, oom_watch_.cgroup_kills(v.slot.pid)));
      }
      oom_watch_.forget(v.slot.pid);
    }
    v.exit = t.exit;
  }

  // Reads every user's slot file of the job (slot_dir.h), opened afresh each sample: a file
  // replaced or shrunk since the last sample is seen as it is now, never through a stale map.
  void read_ranks(NodeSnapshot& node, MonoTime mono) {
    std::vector<RankView> views;
    for (const auto& user : reporter::list_slot_files(options_.dir, options_.job, &node.refused_slot_dirs)) {
      auto file = SlotFile::open_for_reading(user.path, user.uid);
      if (!file) {
        // Gone since the listing only means its ranks finished; anything else is worth saying.
        if (file.error().code == "io") continue;
        node.malformed_slots.push_back(file.error().message);
        continue;
      }
      size_t first = views.size();
      read_file(*file, user.uid, node, mono, views);
      // Shrunk while we copied: what we read since is zeros, not the ranks' reports.
      if (!file->intact()) {
        views.resize(first);
        std::erase_if(stack_wanted_, [&](const StackWanted& w) { return w.view >= first; });
        node.malformed_slots.push_back(file->path() + " shrank while it was read; its ranks cannot be seen");
      }
    }
    capture_wanted_stacks(node.now_ms, views);
    // A dead slot from an earlier run of the job (last active before a live rank started)
    // is history, not a failure of this run.
    int64_t newest_live_start = 0;
    for (const auto& v : views) {
      if (v.alive) newest_live_start = std::max(newest_live_start, v.slot.started_at_ms);
    }
    std::erase_if(views, [&](const RankView& v) {
      int64_t last_active = std::max({v.slot.started_at_ms, v.slot.status_changed_ms, v.slot.error_ms,
                                      v.slot.checkpoint_end_ms, v.last_step_ms});
      return !v.alive && newest_live_start > 0 && last_active < newest_live_start - 1000 &&
             v.slot.started_at_ms < newest_live_start - 1000;
    });
    std::sort(views.begin(), views.end(),
              [](const RankView& a, const RankView& b) { return a.slot.rank < b.slot.rank; });
    node.ranks = std::move(views);
  }

  static void copy_stacks(const Track& t, RankView& v) {
    v.stack = t.stack;
    v.stack_ms = t.stack_ms;
    v.stack_note = t.stack_note;
    v.native = t.native;
    v.native_note = t.native_note;
    v.children = t.children;
  }

  // Asks the overdue ranks found by read_file for their stacks, all at once: the Python
  // stacks first (the rank's own handler must run, so it must not be stopped), with those
  // of their children that keep a stack file (DataLoader workers: child_stacks.h), then the
  // native frames, which stop each rank for as long as eu-stack walks it.
  void capture_wanted_stacks(int64_t now_ms, std::vector<RankView>& views) {
    if (stack_wanted_.empty()) return;
    std::vector<StackTarget> targets;
    std::vector<int32_t> pids;
    targets.reserve(stack_wanted_.size());
    for (const auto& w : stack_wanted_) {
      targets.push_back(w.target);
      pids.push_back(w.target.pid);
    }
    // The children's targets follow the ranks': children_of[i] is rank i's first and end.
    std::vector<std::pair<size_t, size_t>> children_of;
    for (const auto& w : stack_wanted_) {
      const size_t first = targets.size();
      for (auto& child : child_stack_targets(w.target, options_.dir, options_.job, options_.proc_root))
        targets.push_back(std::move(child));
      children_of.emplace_back(first, targets.size());
    }
    auto captures = capture_stacks(targets, options_.proc_root);
    std::vector<NativeCapture> natives(pids.size());
    if (!native_tool_.empty()) {
      natives = capture_native_stacks(native_tool_, pids, options_.proc_root);
    } else if (options_.native_stacks) {
      for (auto& n : natives)
        n.note = options_.native_tool + " is not on PATH (package elfutils): no native frames";
    }
    for (size_t i = 0; i < stack_wanted_.size(); ++i) {
      Track& t = tracks_[stack_wanted_[i].key];
      t.captured = true;
      t.stack = std::move(captures[i].stack);
      t.stack_ms = now_ms;
      t.stack_note = std::move(captures[i].note);
      t.native = std::move(natives[i].stack);
      t.native_note = std::move(natives[i].note);
      t.children = children_with_stacks(targets, captures, children_of[i]);
      copy_stacks(t, views[stack_wanted_[i].view]);
    }
    stack_wanted_.clear();
  }

  // The children in [range) whose dump came, each cut to its main thread; null when none.
  static std::shared_ptr<const std::vector<ChildPyStack>> children_with_stacks(
      const std::vector<StackTarget>& targets, const std::vector<StackCapture>& captures,
      std::pair<size_t, size_t> range) {
    std::vector<ChildPyStack> out;
    for (size_t c = range.first; c < range.second; ++c) {
      if (captures[c].stack) out.push_back({targets[c].pid, child_stack_of(*captures[c].stack)});
    }
    if (out.empty()) return nullptr;
    return std::make_shared<const std::vector<ChildPyStack>>(std::move(out));
  }

  AgentOptions options_;
  const Clock& clock_;
  std::shared_ptr<NvmlProbe> nvml_;
  std::shared_ptr<FabricWatch> fabric_;
  GpuRanks gpu_ranks_;  // the sampler's: which GPU each rank uses
  std::shared_ptr<RendezvousTarget> rendezvous_target_;
  ProbeWorker<NvmlInfo> nvml_worker_;
  ProbeWorker<FabricInfo> fabric_worker_;
  ProbeWorker<std::vector<DiskInfo>> disk_worker_;
  ProbeWorker<MemoryInfo> memory_worker_;
  ProbeWorker<RendezvousInfo> rendezvous_worker_;

  std::unique_ptr<ExitWatch> exit_watch_;  // null when the kernel refused (exit_watch_note_ says why)
  std::string exit_watch_note_;
  std::optional<uint64_t> oom_kills_;  // the host's, at this sample
  OomWatch oom_watch_{options_.proc_root, options_.cgroup_root};
  uint64_t own_cpu_ticks_ = 0;  // this process's agent threads', at this sample
  const int32_t self_pid_ = static_cast<int32_t>(::getpid());
  const uint64_t page_size_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::unordered_set<int32_t> tracked_pids_;  // the ranks' pids: the exits worth keeping
  std::unique_ptr<ReportPusher> pusher_;      // set in start(), before any thread runs
  std::mutex sample_mu_;                      // one sample at a time (sampler thread or a test)
  // Keyed by (uid of the slot file, slot index): each user has a file with its own slots.
  // Entries live as long as the agent; at most kMaxUserDirs * kSlotCount of them.
  std::map<SlotKey, Track> tracks_;
  std::map<SlotKey, RankView> last_views_;
  // Slots found invalid, with the owner they had then (slot_valid); as bounded as tracks_.
  struct InvalidSlot {
    uint64_t owner = 0;
    std::string problem;
  };
  std::map<SlotKey, InvalidSlot> invalid_;
  std::map<SlotKey, int> busy_samples_;  // samples in a row a never-read slot was busy
  struct StackWanted {
    size_t view;  // index into the sample's views
    SlotKey key;
    StackTarget target;
  };
  std::vector<StackWanted> stack_wanted_;  // filled by read_file, emptied by capture_wanted_stacks
  std::string native_tool_;                // eu-stack's path; "" when off or not found
  bool probed_once_ = false;
  MonoTime last_probe_{};

  mutable std::mutex published_mu_;
  std::shared_ptr<const Rendered> published_;

  boost::asio::io_context io_{1};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      boost::asio::make_work_guard(io_)};
  std::shared_ptr<http::Server> server_;
  std::thread http_thread_;
  std::thread sampler_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopped_ = false;
};

}  // namespace

Result<std::unique_ptr<Agent>> Agent::start(AgentOptions options, const Clock& clock, bool serve_http,
                                            bool run_threads) {
  if (const char* lib = std::getenv("TRAINWATCH_NVML_LIBRARY"); lib && *lib) options.nvml_library = lib;
  if (const char* root = std::getenv("TRAINWATCH_SYSFS_ROOT"); root && *root && options.sysfs_root == "/sys")
    options.sysfs_root = root;
  if (options.node.empty()) {
    if (const char* node = std::getenv("TRAINWATCH_NODE"); node && *node) options.node = node;
  }
  if (std::string problem = name_problem(options.job); !problem.empty()) {
    return make_error("argument", "job name '" + options.job + "': " + problem);
  }
  auto agent = std::make_unique<AgentImpl>(std::move(options), clock);
  if (auto st = agent->start(serve_http, run_threads); !st) return st.error();
  return std::unique_ptr<Agent>(std::move(agent));
}

}  // namespace trainwatch::agent
