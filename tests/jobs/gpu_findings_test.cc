// GPU and fabric findings through the whole analysis on a manual clock: node reports as the
// agent sends them (a GPU per rank, mapped by its agent), the verdict a person reads.
#include <gtest/gtest.h>

#include "fakes/manual_clock.h"
#include "jobs/analysis.h"
#include "jobs/interruption.h"
#include "jobs/job_state.h"
#include "jobs/rank_reports.h"

namespace trainwatch::jobs {
namespace {

using testing::ManualClock;
using testing::node_report;
using testing::training;

// Rank `rank` on its own GPU, index local (rank % 4), as its agent's mapping says.
RankReport on_gpu(int rank, int64_t step) {
  RankReport r = training(rank, step);
  r.local_rank = rank % 4;
  r.gpu = RankGpuReport{rank % 4, 70'000'000'000ull, "nvml"};
  return r;
}

GpuReport gpu(int index) {
  GpuReport g;
  g.index = index;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pci_bus_id = "00000000:" + std::string(index == 1 ? "8A" : "1" + std::to_string(index)) + ":00.0";
  g.memory_used = 70'000'000'000ull;
  g.memory_total = 80'000'000'000ull;
  g.recovery_action = "none";
  g.row_remap = RowRemapReport{};
  return g;
}

class GpuFindings : public ::testing::Test {
 protected:
  GpuFindings() : job_("llama") { spec_.world_size = 8; }

  // node-a carries ranks 0-3 on GPUs 0-3, node-b ranks 4-7; `a` and `b` change their GPUs
  // and ports before the reports go in.
  void reports(
      int64_t step, const std::function<void(NodeReport&)>& a = [](NodeReport&) {},
      const std::function<void(NodeReport&)>& b = [](NodeReport&) {}) {
    NodeReport na =
        node_report("node-a", {on_gpu(0, step), on_gpu(1, step), on_gpu(2, step), on_gpu(3, step)}, every_);
    NodeReport nb =
        node_report("node-b", {on_gpu(4, step), on_gpu(5, step), on_gpu(6, step), on_gpu(7, step)}, every_);
    for (int i = 0; i < 4; ++i) {
      na.gpus.push_back(gpu(i));
      nb.gpus.push_back(gpu(i));
    }
    a(na);
    b(nb);
    ASSERT_TRUE(job_.ingest(na, clock_.monotonic_time(), clock_.system_time()));
    ASSERT_TRUE(job_.ingest(nb, clock_.monotonic_time(), clock_.system_time()));
  }
  void healthy_run() {
    for (int64_t step = 0; step <= 100; step += 10) {
      reports(step);
      clock_.advance(Millis(1'000));
    }
  }
  JobVerdict verdict() { return analyse(job_, spec_, clock_.monotonic_time(), clock_.system_time()); }
  static const Finding* find(const JobVerdict& v, FindingCode code, int rank = -1) {
    for (const auto& f : v.findings) {
      if (f.code == code && (rank < 0 || (f.ranks.size() == 1 && f.ranks[0] == rank))) return &f;
    }
    return nullptr;
  }

  JobState job_;
  JobCheckSpec spec_;
  ManualClock clock_;
  Millis every_{1'000};
};

TEST_F(GpuFindings, PendingRemapAndARebootRecoveryActionAreNodeFaultsNamingNodeGpuAndRanks) {
  healthy_run();
  EXPECT_FALSE(verdict().down) << verdict().cause;
  reports(110, [](NodeReport& a) {
    a.gpus[1].row_remap->pending = true;
    a.gpus[2].recovery_action = "node_reboot";
  });
  const JobVerdict v = verdict();
  ASSERT_TRUE(v.down) << v.cause;
  const Finding* remap = find(v, FindingCode::kGpuRowRemapPending);
  ASSERT_NE(remap, nullptr) << v.cause;
  EXPECT_EQ(remap->severity, Severity::kDown);
  EXPECT_TRUE(remap->node_fault);
  EXPECT_EQ(remap->node, "node-a");
  EXPECT_EQ(remap->ranks, std::vector<int>{1});
  EXPECT_EQ(
      remap->message,
      "rank 1 (node-a, GPU 1 00000000:8A:00.0): memory rows are pending remapping; reset the GPU to apply them");
  const Finding* action = find(v, FindingCode::kGpuRecoveryAction);
  ASSERT_NE(action, nullptr) << v.cause;
  EXPECT_TRUE(action->node_fault);
  EXPECT_EQ(action->ranks, std::vector<int>{2});
  EXPECT_EQ(
      action->message,
      "rank 2 (node-a, GPU 2 00000000:12:00.0): the driver's GPU recovery action is node_reboot: reboot the node");
  EXPECT_EQ(classify(v.findings.front(), job_).kind, InterruptionKind::kGpuFault);
}

TEST_F(GpuFindings, Xid79OnRankFivesGpuNamesRankFiveAndNvidiasActionInTheAlert) {
  healthy_run();
  reports(
      110, [](NodeReport&) {},
      [](NodeReport& b) {
        b.gpus[1].last_xid = 79;
        b.gpus[1].xid_count = 1;
        b.gpus[1].xids = {{79, 300}};
      });
  const JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  ASSERT_FALSE(v.findings.empty());
  const Finding& head = v.findings.front();
  EXPECT_EQ(head.code, FindingCode::kGpuXid);
  EXPECT_TRUE(head.node_fault);
  EXPECT_EQ(head.ranks, std::vector<int>{5});
  EXPECT_EQ(head.since, clock_.monotonic_time() - Millis(300)) << "dated by the event, not the report";
  EXPECT_EQ(v.cause.rfind(
                "rank 5 (node-b, GPU 1 00000000:8A:00.0): XID 79, the GPU fell off the bus \u2014 NVIDIA: "
                "reboot the node",
                0),
            0u)
      << v.cause;
}

TEST_F(GpuFindings, ARankThatVanishedWithItsGpuIsBlamedOnTheGpu) {
  healthy_run();
  reports(
      110, [](NodeReport&) {},
      [](NodeReport& b) {
        b.ranks[1].alive = false;
        b.ranks[1].state = '?';
        b.ranks[1].gone_age_ms = 0;
        b.gpus[1].lost = true;
        b.gpus[1].xids = {{79, 100}};
      });
  const JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_TRUE(v.findings.front().node_fault) << v.cause;
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{5});
  EXPECT_NE(find(v, FindingCode::kRankGone, 5), nullptr)
      << "the rank's death is still a finding: " << v.cause;
}

TEST_F(GpuFindings, AnApplicationXidIsAFindingOnTheRankNotANodeFault) {
  healthy_run();
  reports(
      110, [](NodeReport&) {},
      [](NodeReport& b) {
        b.gpus[2].xids = {{13, 0}};
      });
  const JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << v.cause;
  const Finding* f = find(v, FindingCode::kGpuXid, 6);
  ASSERT_NE(f, nullptr) << v.cause;
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_FALSE(f->node_fault);
  EXPECT_NE(f->message.find("XID 13, a graphics engine exception"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("(usually the application's own fault)"), std::string::npos) << f->message;
}

TEST_F(GpuFindings, AContainedMemoryErrorDownsTheRankWithoutBlamingTheNode) {
  healthy_run();
  reports(110, [](NodeReport& a) { a.gpus[0].xids = {{94, 0}}; });
  const JobVerdict v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().ranks, std::vector<int>{0});
  EXPECT_FALSE(v.findings.front().node_fault);
  EXPECT_NE(v.cause.find("NVIDIA: restart the application"), std::string::npos) << v.cause;
}

TEST_F(GpuFindings, ANvlinkDownAfterBeingUpIsANodeFault) {
  healthy_run();
  reports(110, [](NodeReport& a) { a.gpus[3].nvlinks = NvlinkSummary{18, 17, {4}, 12}; });
  const JobVerdict v = verdict();
  const Finding* f = find(v, FindingCode::kNvlinkDown);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->node_fault);
  EXPECT_EQ(f->message,
            "rank 3 (node-a, GPU 3 00000000:13:00.0): NVLink 4 down after being up (17 of 18 active)");
}

IbPortReport port(const std::string& state, int64_t link_downed, int64_t rise) {
  IbPortReport p;
  p.device = "mlx5_0";
  p.port = 1;
  p.state = state;
  p.phys_state = state == "ACTIVE" ? "LinkUp" : "Polling";
  p.link_layer = "InfiniBand";
  p.was_active = true;
  p.link_downed = link_downed;
  p.link_downed_rise = rise;
  return p;
}

TEST_F(GpuFindings, AnInfinibandPortWhoseLinkDownedRoseIsANodeFindingAndDownIsANodeFault) {
  healthy_run();
  reports(
      110, [](NodeReport&) {}, [](NodeReport& b) { b.ib_ports = {port("ACTIVE", 3, 2)}; });
  JobVerdict v = verdict();
  EXPECT_FALSE(v.down) << "up again: a warning";
  const Finding* flap = find(v, FindingCode::kIbLinkDowned);
  ASSERT_NE(flap, nullptr) << v.cause;
  EXPECT_EQ(flap->node, "node-b");
  EXPECT_TRUE(flap->node_fault);
  EXPECT_EQ(
      flap->message,
      "InfiniBand port mlx5_0/1 on node-b went down 2 times recently (link_downed 1 \u2192 3); ranks 4-7 run "
      "there");
  clock_.advance(Millis(1'000));
  reports(
      120, [](NodeReport&) {}, [](NodeReport& b) { b.ib_ports = {port("DOWN", 4, 3)}; });
  v = verdict();
  ASSERT_TRUE(v.down);
  EXPECT_EQ(v.findings.front().code, FindingCode::kIbPortDown);
  EXPECT_EQ(v.findings.front().ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(classify(v.findings.front(), job_).kind, InterruptionKind::kFabricFault);
}

TEST_F(GpuFindings, AStragglerWhoseGpuIsThrottledSaysSo) {
  for (int i = 0; i <= 6; ++i) {
    reports(
        10 * i + 10,
        [&](NodeReport& a) {
          for (auto& r : a.ranks) r.cpu_s = (r.rank == 3 ? 0.030 : 0.010) * 10 * i;
          a.gpus[3].clock_event_reasons = std::vector<std::string>{"hw_thermal_slowdown"};
          a.gpus[3].temperature_c = 91;
        },
        [&](NodeReport& b) {
          for (auto& r : b.ranks) r.cpu_s = 0.010 * 10 * i;
        });
    clock_.advance(Millis(1'000));
  }
  const JobVerdict v = verdict();
  const Finding* f = find(v, FindingCode::kStraggler, 3);
  ASSERT_NE(f, nullptr) << v.cause;
  EXPECT_NE(f->message.find("; its GPU 3 00000000:13:00.0 is slowed by HW thermal slowdown (91 \u00b0C)"),
            std::string::npos)
      << f->message;
  EXPECT_NE(find(v, FindingCode::kGpuThrottled, 3), nullptr);
}

}  // namespace
}  // namespace trainwatch::jobs
