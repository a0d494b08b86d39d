// The agent against real slot files, real child processes, the fake NVML library loaded
// through the real dlopen path, and a manual clock for every deadline.
#include "agent/agent.h"
#include "agent/exit_watch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>

#include "core/rank_rule.h"
#include "core/utf8.h"
#include "fakes/manual_clock.h"
#include "reporter/slot_file.h"
#include "reporter/temp_dir.h"
#include "trainwatch/trainwatch.hpp"

namespace trainwatch::agent {
namespace {

namespace json = boost::json;
using trainwatch::testing::ManualClock;
using trainwatch::testing::TempDir;

tw_options rank_options(const std::string& dir, int rank, int world) {
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "job";
  o.dir = dir.c_str();
  o.rank = o.local_rank = rank;
  o.rank_set = o.local_rank_set = 1;
  o.world_size = world;
  o.world_size_set = 1;
  return o;
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nvml_config_ = tmp_.path() + "/nvml.conf";
    write_nvml("count 0\n");
    ::setenv("FAKE_NVML_CONFIG", nvml_config_.c_str(), 1);
    options_.job = "job";
    options_.dir = tmp_.path();
    options_.nvml_library = FAKE_NVML_PATH;
    options_.thresholds.host_memory_free_bytes = 0;
  }
  void TearDown() override {
    write_nvml("count 0\n");  // release any hanging fake call before the agent goes
    if (agent_) agent_->wait_probes_idle(Millis{5'000});
    agent_.reset();
  }
  void write_nvml(const std::string& text) { std::ofstream(nvml_config_) << text; }
  void start() {
    auto a = Agent::start(options_, clock_, /*serve_http=*/false, /*run_threads=*/false);
    ASSERT_TRUE(a.ok()) << a.error().message;
    agent_ = std::move(*a);
    ASSERT_TRUE(agent_->wait_probes_idle(Millis{5'000}));
    agent_->sample_once();  // publish what the first probe run found
  }
  // A sample after the probes' next run has finished.
  json::object sample_after_probes() {
    clock_.advance(options_.probe_interval);
    agent_->sample_once();
    EXPECT_TRUE(agent_->wait_probes_idle(Millis{5'000}));
    agent_->sample_once();
    return health();
  }
  json::object health() { return json::parse(agent_->current()->health_json).as_object(); }
  int status() { return agent_->current()->status; }
  static bool has_reason(const json::object& h, const std::string& code, const std::string& text = "") {
    for (const auto& r : h.at("reasons").as_array()) {
      const auto& o = r.as_object();
      if (o.at("code").as_string() == code &&
          std::string(o.at("message").as_string()).find(text) != std::string::npos) {
        return true;
      }
    }
    return false;
  }

  TempDir tmp_;
  std::string nvml_config_;
  AgentOptions options_;
  ManualClock clock_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentTest, HealthyTrainingRankAndSeedFields) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  r.step(5, 1.25);
  start();
  auto h = sample_after_probes();
  EXPECT_EQ(status(), 200) << json::serialize(h);
  EXPECT_EQ(h.at("status").as_string(), "ok");
  const auto& t = h.at("training").as_object();
  for (const char* key : {"status", "step", "loss", "loss_scale", "overflow_steps", "last_checkpoint_step",
                          "last_checkpoint_time", "workers_alive", "started_at", "last_step_time",
                          "pipeline_stage", "gemini_oom_events", "world_size", "kernels_compiled"}) {
    EXPECT_TRUE(t.contains(key)) << key;
  }
  EXPECT_EQ(t.at("step").as_int64(), 5);
  EXPECT_EQ(t.at("loss").as_double(), 1.25);
  EXPECT_EQ(t.at("workers_alive").as_int64(), 1);
  EXPECT_FALSE(h.at("stalled").as_bool());
  for (const char* key : {"ranks", "gpus", "disks", "memory", "rendezvous", "reasons"})
    EXPECT_TRUE(h.contains(key)) << key;
  EXPECT_NE(agent_->current()->metrics.find("trainwatch_rank_step{training_job=\"job\",rank=\"0\"} 5\n"),
            std::string::npos)
      << agent_->current()->metrics;
}

TEST_F(AgentTest, InitializingRankIsNotYetHealthy) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  start();
  auto h = sample_after_probes();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(has_reason(h, "initializing", "rank 0 is still initializing"));
}

TEST_F(AgentTest, StallAfterThresholdOnTheInjectedClock) {
  options_.thresholds.stall_after = Millis{600'000};
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  r.step(1, 1.0);
  start();
  EXPECT_EQ(status(), 200);
  clock_.advance(Millis{599'000});
  agent_->sample_once();
  EXPECT_EQ(status(), 200);
  clock_.advance(Millis{2'000});
  agent_->sample_once();
  auto h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(h.at("stalled").as_bool());
  EXPECT_TRUE(has_reason(h, "stalled", "no step for 601 s"));
  r.step(2, 1.0);
  agent_->sample_once();
  EXPECT_EQ(status(), 200) << "a new step clears the stall";
}

// A NaN names the step where the run of bad losses began, not the latest one; once the
// loss recovers, /health is healthy again and the count stays in ranks[] and /metrics.
TEST_F(AgentTest, NonFiniteLossNamesTheRunsFirstStepAndItsCountOutlivesTheRun) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  r.step(1, 2.0);
  start();
  EXPECT_EQ(status(), 200);
  clock_.advance(Millis{200});
  r.step(2, std::numeric_limits<double>::quiet_NaN());
  agent_->sample_once();
  const double first_seen_s = static_cast<double>(to_unix_ms(clock_.system_time())) / 1000.0;
  clock_.advance(Millis{200});
  r.step(3, std::numeric_limits<double>::quiet_NaN());
  r.step(4, std::numeric_limits<double>::infinity());
  agent_->sample_once();
  auto h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(has_reason(h, "loss_not_finite",
                         "rank 0 has reported non-finite losses since step 2: 3 so far, inf at step 4"))
      << json::serialize(h);
  const auto& bad = h.at("ranks").as_array().at(0).as_object();
  EXPECT_EQ(bad.at("nonfinite_total").as_int64(), 3);
  EXPECT_EQ(bad.at("nonfinite_first_step").as_int64(), 2);
  EXPECT_EQ(bad.at("nonfinite_first_time").as_double(), first_seen_s)
      << "stamped when the agent first saw it";

  clock_.advance(Millis{200});
  r.step(5, 1.5);
  agent_->sample_once();
  h = health();
  EXPECT_EQ(status(), 200) << json::serialize(h);
  const auto& recovered = h.at("ranks").as_array().at(0).as_object();
  EXPECT_EQ(recovered.at("nonfinite_total").as_int64(), 3);
  EXPECT_EQ(recovered.at("nonfinite_first_step").as_int64(), 2);
  EXPECT_NE(agent_->current()->metrics.find(
                "trainwatch_rank_nonfinite_losses_total{training_job=\"job\",rank=\"0\"} 3\n"),
            std::string::npos)
      << agent_->current()->metrics;
}

TEST_F(AgentTest, KilledRankIs503NamingItsRankAndPid) {
  Reporter r0(rank_options(tmp_.path(), 0, 2));
  r0.status(TW_STATUS_TRAINING);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    Reporter r1(rank_options(tmp_.path(), 1, 2));
    r1.status(TW_STATUS_TRAINING);
    r1.step(7, 0.5);
    (void)!::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  start();
  EXPECT_EQ(status(), 200) << agent_->current()->health_json;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  agent_->sample_once();
  auto h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(has_reason(h, "rank_gone", "rank 1 (pid " + std::to_string(child) + ") is gone"))
      << json::serialize(h);
  // How it ended, where the kernel tells this agent about processes it did not start.
  std::string why;
  if (ExitWatch::open(why)) {
    EXPECT_TRUE(has_reason(h, "rank_gone", "is gone while training at step 7: it was killed by SIGKILL"))
        << json::serialize(h);
  }
  EXPECT_EQ(h.at("training").as_object().at("workers_alive").as_int64(), 1);
  ::close(ready[0]);
  ::close(ready[1]);
}

// A child process that opens `rank`, reports a training step and waits; returns its pid.
pid_t spawn_training_rank(const std::string& dir, int rank, int world) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  pid_t child = ::fork();
  if (child == 0) {
    Reporter r(rank_options(dir, rank, world));
    r.status(TW_STATUS_TRAINING);
    r.step(3, 0.5);
    (void)!::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  char c;
  bool ok = ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  ::close(ready[1]);
  return ok ? child : -1;
}

TEST_F(AgentTest, StoppedRankIsNamedAtOnceNotAfterTheStallTimeout) {
  Reporter r0(rank_options(tmp_.path(), 0, 2));
  r0.status(TW_STATUS_TRAINING);
  pid_t child = spawn_training_rank(tmp_.path(), 1, 2);
  ASSERT_GT(child, 0);
  start();
  EXPECT_EQ(status(), 200) << agent_->current()->health_json;
  ::kill(child, SIGSTOP);
  int ws = 0;
  ASSERT_EQ(::waitpid(child, &ws, WUNTRACED), child);  // returns once the kernel shows it stopped
  ASSERT_TRUE(WIFSTOPPED(ws));
  agent_->sample_once();  // same clock instant: the stall timeout is far away
  auto h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(
      has_reason(h, "rank_stopped", "rank 1 (pid " + std::to_string(child) + ") is stopped (state T)"))
      << json::serialize(h);
  EXPECT_FALSE(h.at("stalled").as_bool());
  ::kill(child, SIGCONT);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

// State D cannot be caused on demand, so the agent reads a proc root holding this
// process's real stat line with the state letter changed (pid and start time stay real).
TEST_F(AgentTest, UninterruptibleRankIsNamedAfterKBlockedAfterAndOnlyWarnedWhileCheckpointing) {
  std::string proc = tmp_.path() + "/proc";
  std::string self = proc + "/" + std::to_string(::getpid());
  std::filesystem::create_directories(self);
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  ASSERT_NE(close, std::string::npos);
  stat[close + 2] = 'D';
  std::ofstream(self + "/stat") << stat;
  options_.proc_root = proc;

  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  r.step(4, 1.0);
  start();
  auto h = health();
  EXPECT_EQ(status(), 200) << "D for moments is I/O, as the server judges it: " << json::serialize(h);
  clock_.advance(kBlockedAfter + Millis{1'000});
  agent_->sample_once();
  h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(
      has_reason(h, "rank_blocked",
                 "rank 0 (pid " + std::to_string(::getpid()) + ") is in uninterruptible sleep (state D"))
      << json::serialize(h);

  r.checkpoint_begin(4, tmp_.path() + "/ckpt");
  agent_->sample_once();
  h = health();
  EXPECT_EQ(status(), 200) << "D while writing a checkpoint is expected I/O: " << json::serialize(h);
  ASSERT_EQ(h.at("warnings").as_array().size(), 1u) << json::serialize(h);
  EXPECT_EQ(h.at("warnings").as_array()[0].as_object().at("code").as_string(), "rank_blocked");
}

TEST_F(AgentTest, GpuMemoryOverThresholdAndXids) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  write_nvml("count 8\nmem 2 964 1000\nmem 0 100 1000\nxid 3 79\nxid 4 13\n");
  start();
  auto h = health();
  EXPECT_EQ(h.at("gpus").as_array().size(), 8u);
  EXPECT_TRUE(has_reason(h, "gpu_memory", "GPU 2 (00000000:12:00.0) memory 96.4% \u2265 95%"))
      << json::serialize(h);
  EXPECT_TRUE(has_reason(h, "gpu_xid", "GPU 3 (00000000:13:00.0): XID 79, the GPU fell off the bus"));
  EXPECT_FALSE(has_reason(h, "gpu_xid", "XID 13")) << "application XIDs are warnings";
  EXPECT_EQ(h.at("warnings").as_array().size(), 1u);
  EXPECT_TRUE(h.at("oom_risk").as_bool());
  EXPECT_EQ(status(), 503);
}

TEST_F(AgentTest, HangingNvmlCallIsReportedAndNeverBlocksHealth) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  write_nvml("count 1\nmem 0 1 10\n");
  start();
  EXPECT_EQ(status(), 200);
  write_nvml("count 1\nmem 0 1 10\nhang nvmlDeviceGetMemoryInfo\n");
  clock_.advance(options_.probe_interval);
  agent_->sample_once();  // kicks the probe, which now hangs in the fake driver
  EXPECT_FALSE(agent_->wait_probes_idle(Millis{200})) << "the fake call should be hanging";
  clock_.advance(options_.probe_deadline + Millis{1'000});
  agent_->sample_once();  // returns although NVML is stuck
  auto h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(has_reason(h, "nvml_hung", "NVML has not answered nvmlDeviceGetMemoryInfo for 6.0 s"))
      << json::serialize(h);
  write_nvml("count 1\nmem 0 1 10\n");
  ASSERT_TRUE(agent_->wait_probes_idle(Millis{5'000}));
  agent_->sample_once();
  EXPECT_EQ(status(), 200) << agent_->current()->health_json;
}

TEST_F(AgentTest, NoNvmlLibraryIsAStateNotAnError) {
  options_.nvml_library = tmp_.path() + "/no-such-libnvidia-ml.so.1";
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  start();
  auto h = sample_after_probes();
  EXPECT_EQ(status(), 200) << json::serialize(h);
  EXPECT_FALSE(h.at("nvml").as_object().at("library_loaded").as_bool());
  EXPECT_TRUE(h.at("gpus").as_array().empty());
}

TEST_F(AgentTest, DiskFreeThresholdOnARealPath) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  options_.disks.push_back({"checkpoint_dir", tmp_.path()});
  options_.disks.push_back({"nvme", tmp_.path() + "/missing"});
  // More free space than any disk here has: the real statvfs answer must be under it.
  options_.thresholds.disk_free_bytes = 1ull << 60;
  start();
  auto h = health();
  EXPECT_TRUE(has_reason(h, "disk_low", "checkpoint_dir " + tmp_.path() + " has")) << json::serialize(h);
  EXPECT_TRUE(has_reason(h, "disk_missing", "nvme " + tmp_.path() + "/missing"));
  EXPECT_FALSE(h.at("disks").as_array()[0].as_object().at("ok").as_bool());
}

TEST_F(AgentTest, DiskWithEnoughSpaceIsFine) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  options_.disks.push_back({"checkpoint_dir", tmp_.path()});
  options_.thresholds.disk_free_bytes = 1;
  start();
  EXPECT_EQ(status(), 200) << agent_->current()->health_json;
}

// Someone cuts the slot file to nothing under a running rank and the agent: both go on;
// the agent says the file is malformed instead of reading zeros as ranks.
TEST_F(AgentTest, TruncatedSlotFileIsMalformedNotACrash) {
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  r.step(5, 1.0);
  start();
  EXPECT_EQ(status(), 200) << agent_->current()->health_json;
  std::string path = reporter::slot_file_path(tmp_.path(), "job");
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  EXPECT_EQ(r.step(6, 1.0), TW_OK);  // the rank's store lands in its private copy
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("training continues"), std::string::npos) << err;
  agent_->sample_once();
  auto h = health();
  EXPECT_EQ(status(), 503);
  EXPECT_TRUE(has_reason(h, "slot_file_malformed", path + " is 0 bytes")) << json::serialize(h);
  EXPECT_EQ(r.step(7, 1.0), TW_OK);

  // The next rank to start replaces the damaged file; the agent reads it again.
  Reporter next(rank_options(tmp_.path(), 1, 2));
  ASSERT_TRUE(next.enabled());
  next.status(TW_STATUS_TRAINING);
  next.step(1, 1.0);
  agent_->sample_once();
  h = health();
  EXPECT_FALSE(has_reason(h, "slot_file_malformed")) << json::serialize(h);
  EXPECT_EQ(h.at("ranks").as_array().size(), 1u) << json::serialize(h);
}

// Random bytes over a slot nobody uses (a stray write): no phantom rank, a slot_invalid
// warning naming the file and the slot every sample, one line in the log, and /health
// still UTF-8 JSON. Seeds of both seqlock parities: an odd one reads as busy for ever.
TEST_F(AgentTest, RandomBytesOverASlotAreAnInvalidSlotNotARank) {
  Reporter r(rank_options(tmp_.path(), 0, 2));
  r.status(TW_STATUS_TRAINING);
  r.step(5, 1.0);
  start();
  const std::string path = reporter::slot_file_path(tmp_.path(), "job");
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    std::mt19937_64 rng(seed);
    std::string bytes(reporter::kSlotSize, '\0');
    for (auto& b : bytes) b = static_cast<char>(rng());
    const uint32_t slot = 2 + static_cast<uint32_t>(seed);
    int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), reporter::kHeaderSize + slot * reporter::kSlotSize),
              static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    ::testing::internal::CaptureStderr();
    for (int i = 0; i < 8; ++i) agent_->sample_once();
    const std::string err = ::testing::internal::GetCapturedStderr();
    const std::string named = "slot " + std::to_string(slot) + " of " + path + " is invalid (";
    EXPECT_NE(err.find(named), std::string::npos) << err;
    EXPECT_EQ(err.find(named), err.rfind(named)) << "said more than once: " << err;

    const std::string& text = agent_->current()->health_json;
    EXPECT_TRUE(is_valid_utf8(text));
    auto h = health();
    EXPECT_EQ(status(), 200) << text;
    ASSERT_EQ(h.at("ranks").as_array().size(), 1u) << text;
    EXPECT_EQ(h.at("ranks").as_array()[0].as_object().at("rank").as_int64(), 0);
    bool noted = false;
    for (const auto& w : h.at("warnings").as_array()) {
      const auto& o = w.as_object();
      noted = noted || (o.at("code").as_string() == "slot_invalid" &&
                        std::string(o.at("message").as_string()).find(named) == 0);
    }
    EXPECT_TRUE(noted) << text;
  }
}

// Ranks of two users on one node each write their own file; the agent (root here) reads both.
TEST_F(AgentTest, ReadsTheRanksOfEveryUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "running a rank as another user needs root";
  ASSERT_EQ(::chmod(tmp_.path().c_str(), 0755), 0);  // let the other user reach the slot directory
  std::string top = tmp_.path() + "/slots";
  options_.dir = top;
  mode_t old_mask = ::umask(022);
  Reporter r0(rank_options(top, 0, 2));
  ::umask(old_mask);
  ASSERT_TRUE(r0.enabled());
  r0.status(TW_STATUS_TRAINING);
  r0.step(3, 1.0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    ::umask(022);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) std::_Exit(1);
    Reporter r1(rank_options(top, 1, 2));
    if (!r1.enabled()) std::_Exit(2);
    r1.status(TW_STATUS_TRAINING);
    r1.step(3, 0.5);
    (void)!::write(ready[1], "x", 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c;
  bool reported = ::read(ready[0], &c, 1) == 1;
  ::close(ready[0]);
  if (reported) {
    start();
    auto h = health();
    EXPECT_EQ(h.at("training").as_object().at("workers_alive").as_int64(), 2) << json::serialize(h);
    EXPECT_EQ(status(), 200) << json::serialize(h);
  }
  ::kill(child, SIGKILL);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
  EXPECT_TRUE(reported) << "the second user's rank could not report (exit " << WEXITSTATUS(wstatus) << ")";
}

// A user directory that is a symlink is named, never followed, and costs no one's health.
TEST_F(AgentTest, SymlinkedUserDirectoryIsRefused) {
  TempDir elsewhere;
  Reporter r(rank_options(tmp_.path(), 0, 1));
  r.status(TW_STATUS_TRAINING);
  r.step(1, 1.0);
  std::string fake = tmp_.path() + "/4242";
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), fake.c_str()), 0);
  start();
  auto h = health();
  bool warned = false;
  for (const auto& w : h.at("warnings").as_array()) {
    const auto& o = w.as_object();
    warned = warned ||
             (o.at("code").as_string() == "slot_dir_refused" &&
              std::string(o.at("message").as_string()).find(fake + " is a symlink") != std::string::npos);
  }
  EXPECT_TRUE(warned) << json::serialize(h);
  // Anyone may plant such an entry in the shared directory: it must not turn health red.
  EXPECT_EQ(status(), 200) << json::serialize(h);
}

}  // namespace
}  // namespace trainwatch::agent
