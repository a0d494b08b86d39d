// The agent's GPU and fabric signals: the fake NVML (tests/fakes/fake_nvml) loaded through
// the real dlopen path with per-test values, faults and events, a fake sysfs tree for the
// InfiniBand ports, real rank processes, and a manual clock for the probes' deadline.
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <filesystem>
#include <fstream>

#include "agent/agent.h"
#include "agent/gpu_ranks.h"
#include "fakes/manual_clock.h"
#include "reporter/temp_dir.h"
#include "trainwatch/trainwatch.hpp"

namespace trainwatch::agent {
namespace {

namespace json = boost::json;
namespace fs = std::filesystem;
using trainwatch::testing::ManualClock;
using trainwatch::testing::TempDir;

tw_options rank_options(const std::string& dir, int rank) {
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "job";
  o.dir = dir.c_str();
  o.rank = o.local_rank = rank;
  o.rank_set = o.local_rank_set = 1;
  o.world_size = 8;
  o.world_size_set = 1;
  return o;
}

class GpuAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    nvml_config_ = tmp_.path() + "/nvml.conf";
    write_nvml("count 0\n");
    ::setenv("FAKE_NVML_CONFIG", nvml_config_.c_str(), 1);
    options_.job = "job";
    options_.dir = tmp_.path() + "/slots";
    options_.nvml_library = FAKE_NVML_PATH;
    options_.sysfs_root = tmp_.path() + "/sys";
    options_.thresholds.host_memory_free_bytes = 0;
  }
  void TearDown() override {
    write_nvml("count 0\n");  // release any hanging fake call before the agent goes
    if (agent_) agent_->wait_probes_idle(Millis{5'000});
    agent_.reset();
    rank_.reset();
  }
  void write_nvml(const std::string& text) { std::ofstream(nvml_config_) << text; }
  // This process as a training rank: /health is 503 with no rank at all.
  void train_as(int rank) {
    rank_ = std::make_unique<Reporter>(rank_options(tmp_.path() + "/slots", rank));
    rank_->status(TW_STATUS_TRAINING);
  }
  // One port of the fake sysfs tree, as the mlx5 driver lays it out.
  void write_port(const std::string& device, int port, const std::string& state, int link_downed,
                  const std::string& link_layer = "InfiniBand") {
    const fs::path dir =
        fs::path(tmp_.path()) / "sys/class/infiniband" / device / "ports" / std::to_string(port);
    fs::create_directories(dir / "counters");
    std::ofstream(dir / "state") << (state == "ACTIVE" ? "4: ACTIVE\n" : "1: DOWN\n");
    std::ofstream(dir / "phys_state") << (state == "ACTIVE" ? "5: LinkUp\n" : "2: Polling\n");
    std::ofstream(dir / "rate") << "400 Gb/sec (4X NDR)\n";
    std::ofstream(dir / "link_layer") << link_layer << "\n";
    std::ofstream(dir / "counters/link_downed") << link_downed << "\n";
    std::ofstream(dir / "counters/symbol_error") << 0 << "\n";
  }
  void start() {
    auto a = Agent::start(options_, clock_, /*serve_http=*/false, /*run_threads=*/false);
    ASSERT_TRUE(a.ok()) << a.error().message;
    agent_ = std::move(*a);
    ASSERT_TRUE(agent_->wait_probes_idle(Millis{5'000}));
    agent_->sample_once();
  }
  json::object sample_after_probes() {
    clock_.advance(options_.probe_interval);
    agent_->sample_once();
    EXPECT_TRUE(agent_->wait_probes_idle(Millis{5'000}));
    agent_->sample_once();
    return health();
  }
  json::object health() { return json::parse(agent_->current()->health_json).as_object(); }
  const std::string& metrics() { return agent_->current()->metrics; }
  static bool has(const json::object& h, const char* list, const std::string& code, const std::string& text) {
    for (const auto& r : h.at(list).as_array()) {
      const auto& o = r.as_object();
      if (o.at("code").as_string() == code &&
          std::string(o.at("message").as_string()).find(text) != std::string::npos)
        return true;
    }
    return false;
  }

  TempDir tmp_;
  std::unique_ptr<Reporter> rank_;
  std::string nvml_config_;
  AgentOptions options_;
  ManualClock clock_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(GpuAgentTest, EveryNvmlFieldReachesHealthAndMetrics) {
  train_as(0);
  write_nvml(
      "count 2\nmem 0 40 80\ntemp 0 71 88\nclocks 0 1755 2619\nreasons 0 0x48\nremap 0 3 1 0 0\n"
      "retired 0 2 1 0\npcie 0 12 4 5 8 16\nnvlinks 0 2\nnvlink 0 0 1 5 1 2 3\nnvlink 0 1 1\n"
      "recovery 0 0\nproc 0 4242 30\n");
  start();
  const json::object h = sample_after_probes();
  const json::object& g = h.at("gpus").as_array()[0].as_object();
  EXPECT_EQ(g.at("uuid").as_string(), "GPU-00000000-fake-0000-0000-000000000000");
  EXPECT_EQ(g.at("pci_bus_id").as_string(), "00000000:10:00.0");
  EXPECT_EQ(g.at("slowdown_temperature_c").as_int64(), 88);
  EXPECT_EQ(g.at("sm_clock_mhz").as_int64(), 1755);
  EXPECT_EQ(json::serialize(g.at("clock_event_reasons")), R"(["hw_slowdown","hw_thermal_slowdown"])");
  EXPECT_EQ(json::serialize(g.at("row_remap")),
            R"({"correctable":3,"uncorrectable":1,"pending":false,"failure":false})");
  EXPECT_EQ(json::serialize(g.at("retired_pages")), R"({"single_bit":2,"double_bit":1,"pending":false})");
  EXPECT_EQ(json::serialize(g.at("pcie")), R"({"replays":12,"gen":4,"max_gen":5,"width":8,"max_width":16})");
  EXPECT_EQ(g.at("recovery_action").as_string(), "none");
  ASSERT_EQ(g.at("nvlinks").as_array().size(), 2u);
  EXPECT_EQ(g.at("nvlinks").as_array()[0].as_object().at("crc_flit").as_int64(), 2);
  EXPECT_EQ(json::serialize(g.at("processes")), R"([{"pid":4242,"used_bytes":30}])");
  EXPECT_TRUE(has(h, "warnings", "gpu_throttled",
                  "GPU 0 (00000000:10:00.0, rank 0): clocks held down by HW slowdown, HW thermal slowdown"))
      << json::serialize(h);
  EXPECT_EQ(agent_->current()->status, 200) << "throttling is a warning: " << json::serialize(h);

  const std::string& m = metrics();
  // GPU 0 serves rank 0 (its LOCAL_RANK): the samples name it.
  const std::string labels =
      R"(gpu="0",uuid="GPU-00000000-fake-0000-0000-000000000000",training_job="job",rank="0")";
  for (const std::string& line :
       {"trainwatch_gpu_remapped_rows_total{" + labels + R"(,cause="uncorrectable"} 1)",
        "trainwatch_gpu_pcie_replays_total{" + labels + "} 12",
        "trainwatch_gpu_pcie_link_width{" + labels + "} 8",
        "trainwatch_gpu_sm_clock_hertz{" + labels + "} 1755000000",
        "trainwatch_gpu_slowdown_temperature_celsius{" + labels + "} 88",
        "trainwatch_gpu_clock_event_reason_active{" + labels + R"(,reason="hw_thermal_slowdown"} 1)",
        "trainwatch_gpu_nvlink_errors_total{" + labels + R"(,link="0",counter="crc_data"} 3)",
        "trainwatch_gpu_recovery_action{" + labels + "} 0"}) {
    EXPECT_NE(m.find(line + "\n"), std::string::npos) << line << "\n" << m;
  }
}

TEST_F(GpuAgentTest, WhatTheDriverDoesNotSupportIsAbsentNeverAnError) {
  train_as(0);
  write_nvml(
      "count 1\nmem 0 1 10\nunsupported nvmlDeviceGetRemappedRows\nunsupported nvmlDeviceGetFieldValues\n"
      "unsupported nvmlDeviceGetNvLinkState\nunsupported nvmlDeviceGetComputeRunningProcesses_v3\n"
      "unsupported nvmlDeviceGetTemperatureThreshold\nunsupported nvmlDeviceGetCurrPcieLinkWidth\n");
  start();
  const json::object h = sample_after_probes();
  EXPECT_EQ(agent_->current()->status, 200) << json::serialize(h);
  const json::object& g = h.at("gpus").as_array()[0].as_object();
  EXPECT_TRUE(g.at("row_remap").is_null());
  EXPECT_TRUE(g.at("recovery_action").is_null());
  EXPECT_TRUE(g.at("slowdown_temperature_c").is_null());
  EXPECT_TRUE(g.at("processes").is_null());
  EXPECT_TRUE(g.at("nvlinks").as_array().empty());
  EXPECT_TRUE(g.at("pcie").as_object().at("width").is_null());
  EXPECT_EQ(g.at("pcie").as_object().at("gen").as_int64(), 5);
  EXPECT_EQ(metrics().find("trainwatch_gpu_row_remap_pending{"), std::string::npos)
      << "unknown, so not written";
  EXPECT_EQ(metrics().find("trainwatch_gpu_pcie_link_width{"), std::string::npos);
}

TEST_F(GpuAgentTest, PendingRemapRecoveryActionAndALinkThatWentDownAreReasons) {
  train_as(0);
  write_nvml("count 3\nnvlinks 2 2\nnvlink 2 0 1\nnvlink 2 1 1\n");
  start();
  EXPECT_EQ(agent_->current()->status, 200) << agent_->current()->health_json;
  write_nvml("count 3\nremap 0 0 1 1 0\nrecovery 1 2\nnvlinks 2 2\nnvlink 2 0 1\nnvlink 2 1 0\n");
  const json::object h = sample_after_probes();
  EXPECT_EQ(agent_->current()->status, 503);
  EXPECT_TRUE(has(h, "reasons", "gpu_row_remap_pending",
                  "GPU 0 (00000000:10:00.0, rank 0): memory rows are pending remapping"))
      << json::serialize(h);
  EXPECT_TRUE(has(h, "reasons", "gpu_recovery_action",
                  "GPU 1 (00000000:11:00.0): the driver's recovery action is node_reboot (reboot the node)"));
  EXPECT_TRUE(has(h, "reasons", "nvlink_down", "GPU 2 (00000000:12:00.0): NVLink 1 is down (it was up)"));
}

TEST_F(GpuAgentTest, ALinkNeverSeenUpIsNoFault) {
  train_as(0);
  write_nvml("count 1\nnvlinks 0 2\nnvlink 0 0 1\nnvlink 0 1 0\n");
  start();
  const json::object h = sample_after_probes();
  EXPECT_EQ(agent_->current()->status, 200) << "an uncabled link is not news: " << json::serialize(h);
}

TEST_F(GpuAgentTest, AHangInANewCallIsReportedByNameAndNeverBlocksHealth) {
  train_as(0);
  write_nvml("count 1\n");
  start();
  write_nvml("count 1\nhang nvmlDeviceGetRemappedRows\n");
  clock_.advance(options_.probe_interval);
  agent_->sample_once();
  EXPECT_FALSE(agent_->wait_probes_idle(Millis{200})) << "the fake call should be hanging";
  clock_.advance(options_.probe_deadline + Millis{1'000});
  agent_->sample_once();
  EXPECT_TRUE(
      has(health(), "reasons", "nvml_hung", "NVML has not answered nvmlDeviceGetRemappedRows for 6.0 s"))
      << agent_->current()->health_json;
  write_nvml("count 1\n");
  ASSERT_TRUE(agent_->wait_probes_idle(Millis{5'000}));
}

TEST_F(GpuAgentTest, ARankIsMappedToItsGpuByItsPidInNvmlsProcessList) {
  // This process is rank 3 with LOCAL_RANK 3, but NVML finds its pid on GPU 6 (and a stray
  // context on GPU 0): the process list wins, and the GPU with the most memory.
  train_as(3);
  const std::string pid = std::to_string(::getpid());
  write_nvml("count 8\nproc 6 " + pid + " 7000000000\nproc 0 " + pid + " 500000000\nxid 6 79\n");
  start();
  const json::object h = sample_after_probes();
  const json::object& rank = h.at("ranks").as_array()[0].as_object();
  EXPECT_EQ(json::serialize(rank.at("gpu")), R"({"index":6,"memory_used_bytes":7000000000,"source":"nvml"})");
  EXPECT_TRUE(has(h, "reasons", "gpu_xid", "GPU 6 (00000000:16:00.0, rank 3): XID 79")) << json::serialize(h);
  EXPECT_NE(metrics().find(
                R"(trainwatch_gpu_memory_used_bytes{gpu="6",uuid="GPU-00000000-fake-0000-0000-000000000006",)"
                R"(training_job="job",rank="3"})"),
            std::string::npos)
      << metrics();
  EXPECT_NE(metrics().find(R"(,pid=")" + pid + R"(",rank="3"} 7000000000)"), std::string::npos);
}

TEST_F(GpuAgentTest, WithoutItsPidInNvmlARankUsesItsLocalRanksGpu) {
  train_as(2);
  write_nvml("count 4\n");
  start();
  const json::object h = sample_after_probes();
  EXPECT_EQ(json::serialize(h.at("ranks").as_array()[0].as_object().at("gpu")),
            R"({"index":2,"memory_used_bytes":null,"source":"local_rank"})");
}

TEST_F(GpuAgentTest, InfinibandPortsFromTheSysfsTree) {
  train_as(0);
  write_port("mlx5_0", 1, "ACTIVE", 0);
  write_port("mlx5_1", 1, "ACTIVE", 4, "Ethernet");
  start();
  json::object h = sample_after_probes();
  ASSERT_EQ(h.at("ib_ports").as_array().size(), 2u) << json::serialize(h);
  EXPECT_EQ(agent_->current()->status, 200);
  EXPECT_NE(
      metrics().find(
          R"(trainwatch_ib_port_rate_bytes_per_second{device="mlx5_0",port="1",link_layer="InfiniBand",training_job="job"} 50000000000)"),
      std::string::npos)
      << metrics();
  // The link flaps: link_downed rises while the port is up again. A warning, for the window.
  write_port("mlx5_0", 1, "ACTIVE", 2);
  h = sample_after_probes();
  EXPECT_TRUE(
      has(h, "warnings", "ib_link_downed", "InfiniBand port mlx5_0/1 went down 2 times in the last 10 min"))
      << json::serialize(h);
  EXPECT_NE(
      metrics().find(
          R"(trainwatch_ib_link_downed_total{device="mlx5_0",port="1",link_layer="InfiniBand",training_job="job"} 2)"),
      std::string::npos);
  clock_.advance(kFabricWindow);
  h = sample_after_probes();
  EXPECT_FALSE(has(h, "warnings", "ib_link_downed", "mlx5_0/1"))
      << "older than the window: " << json::serialize(h);
  // Down now, after being up: a reason.
  write_port("mlx5_1", 1, "DOWN", 5, "Ethernet");
  h = sample_after_probes();
  EXPECT_TRUE(has(h, "reasons", "ib_port_down", "RoCE port mlx5_1/1 is DOWN (Polling); it was ACTIVE"))
      << json::serialize(h);
  EXPECT_EQ(agent_->current()->status, 503);
}

TEST(GpuFromEnvironment, LocalRankAndCudaVisibleDevices) {
  std::vector<GpuInfo> gpus(4);
  for (unsigned i = 0; i < 4; ++i) {
    gpus[i].index = i;
    gpus[i].uuid = "GPU-aaaa000" + std::to_string(i) + "-0000";
  }
  EXPECT_EQ(gpu_from_environment(2, std::nullopt, gpus), 2u);
  EXPECT_EQ(gpu_from_environment(5, std::nullopt, gpus), std::nullopt) << "no fifth GPU";
  EXPECT_EQ(gpu_from_environment(1, "3,1", gpus), 1u) << "the rank's ordinal in the list";
  EXPECT_EQ(gpu_from_environment(0, "3,1", gpus), 3u);
  EXPECT_EQ(gpu_from_environment(7, "2", gpus), 2u) << "one device per rank: its cuda:0";
  EXPECT_EQ(gpu_from_environment(1, "GPU-aaaa0000-0000,GPU-aaaa0003", gpus), 3u)
      << "a UUID prefix, as CUDA takes it";
  EXPECT_EQ(gpu_from_environment(0, "", gpus), std::nullopt);
  EXPECT_EQ(gpu_from_environment(0, "-1", gpus), std::nullopt);
  EXPECT_EQ(gpu_from_environment(0, "MIG-1234", gpus), std::nullopt);
  EXPECT_EQ(gpu_from_environment(-1, std::nullopt, gpus), std::nullopt);
}

}  // namespace
}  // namespace trainwatch::agent
