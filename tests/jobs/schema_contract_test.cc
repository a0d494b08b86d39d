// The agent's node report and the server's parser agree on schema version 1: what the
// agent renders from a snapshot, the server reads back field for field.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "agent/node_report.h"
#include "jobs/report.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch {
namespace {

TEST(SchemaContract, WhatTheAgentSendsTheServerReads) {
  agent::NodeSnapshot node;
  node.job = "llama";
  node.now_ms = 1'700'000'010'000;
  agent::RankView r;
  r.slot.owner = 77;
  r.slot.rank = 5;
  r.slot.local_rank = 1;
  r.slot.world_size = 8;
  r.slot.pid = 41231;
  r.slot.status = TW_STATUS_TRAINING;
  r.slot.step = 1023;
  r.slot.step_reports = 1024;
  r.slot.present = TW_FIELD_LOSS | TW_FIELD_LOSS_SCALE;
  r.slot.loss = std::numeric_limits<double>::quiet_NaN();
  r.slot.loss_scale = 1024;
  r.slot.checkpoint_state = reporter::CheckpointState::kOk;
  r.slot.checkpoint_step = 1000;
  r.slot.checkpoint_begin_ms = node.now_ms - 9'000;
  r.slot.checkpoint_end_ms = node.now_ms - 8'000;
  r.slot.last_ok_checkpoint_step = 1000;
  r.slot.last_ok_checkpoint_ms = node.now_ms - 8'000;
  r.slot.error = "RuntimeError: Connection closed by peer";
  r.slot.error_ms = node.now_ms - 20;
  r.alive = false;
  r.state = '?';
  r.last_step_ms = node.now_ms - 700;
  node.ranks.push_back(r);
  agent::GpuInfo gpu;
  gpu.index = 2;
  gpu.memory_used = 96;
  gpu.memory_total = 100;
  gpu.last_xid = 79;
  node.nvml.value = agent::NvmlInfo{true, "", {gpu}};

  std::map<uint64_t, agent::RankTrack> tracks = {{77, {400, node.now_ms - 150}}};
  std::string body = agent::render_node_report(node, tracks, {"node-2", 9, true, Millis(5'000), 4120});

  auto parsed = jobs::parse_node_report(body);
  ASSERT_TRUE(parsed) << parsed.error().message << "\n" << body;
  EXPECT_EQ(parsed->job, "llama");
  EXPECT_EQ(parsed->node, "node-2");
  EXPECT_EQ(parsed->seq, 9u);
  EXPECT_TRUE(parsed->final);
  EXPECT_EQ(parsed->report_every, Millis(5'000));
  ASSERT_EQ(parsed->ranks.size(), 1u);
  const jobs::RankReport& x = parsed->ranks[0];
  EXPECT_EQ(x.rank, 5);
  EXPECT_EQ(x.pid, 41231);
  EXPECT_FALSE(x.alive);
  EXPECT_EQ(x.status, jobs::RankStatus::kTraining);
  EXPECT_EQ(x.step, 1023);
  EXPECT_EQ(x.last_step_age_ms, 700);
  EXPECT_EQ(x.max_step_gap_ms, 400);
  EXPECT_EQ(x.gone_age_ms, 150);
  EXPECT_FALSE(x.cpu_s);  // a gone process has no CPU time to report
  EXPECT_TRUE(std::isnan(*x.loss));
  EXPECT_EQ(x.loss_scale, 1024);
  EXPECT_EQ(x.checkpoint.state, jobs::CheckpointState::kOk);
  EXPECT_EQ(x.checkpoint.duration_ms, 1'000);
  EXPECT_EQ(x.checkpoint.last_ok_age_ms, 8'000);
  EXPECT_EQ(x.error, "RuntimeError: Connection closed by peer");
  EXPECT_EQ(x.error_age_ms, 20);
  ASSERT_EQ(parsed->gpus.size(), 1u);
  EXPECT_EQ(parsed->gpus[0].index, 2);
  EXPECT_TRUE(parsed->gpus[0].last_xid_critical);  // 79: fallen off the bus, not the application's
}

// The GPU, its rank and the fabric cross over: what the server's GPU findings read.
TEST(SchemaContract, GpusTheirRanksAndInfinibandPortsArrive) {
  agent::NodeSnapshot node;
  node.job = "llama";
  node.now_ms = 1'700'000'010'000;
  agent::RankView r;
  r.slot.owner = 1;
  r.slot.rank = 5;
  r.alive = true;
  r.gpu = agent::RankGpu{1, 70'000'000'000, "nvml"};
  node.ranks.push_back(r);
  agent::GpuInfo g;
  g.index = 1;
  g.uuid = "GPU-1234";
  g.pci_bus_id = "00000000:8A:00.0";
  g.temperature_c = 84;
  g.slowdown_temperature_c = 87;
  g.clock_event_reasons = 0x40;
  g.row_remap = agent::RowRemapInfo{2, 1, true, false};
  g.retired_pages = agent::RetiredPagesInfo{0, 0, true};
  g.pcie = agent::PcieInfo{7, 4, 5, 16, 16};
  g.recovery_action = 2;
  g.nvlinks = {{0, true, true, 0, 0, 1, 0}, {1, false, true, 2, 0, 0, 0}, {2, false, false, -1, -1, -1, -1}};
  g.recent_xids = {{48, node.now_ms - 900}, {79, node.now_ms - 300}};
  g.last_xid = 79;
  node.nvml.value = agent::NvmlInfo{true, "", {g}};
  agent::IbPortInfo p;
  p.device = "mlx5_0";
  p.state = "ACTIVE";
  p.phys_state = "LinkUp";
  p.link_layer = "InfiniBand";
  p.rate_gbps = 400;
  p.was_active = true;
  p.link_downed = 3;
  p.link_downed_rise = 2;
  node.fabric.value = agent::FabricInfo{{p}};

  auto parsed =
      jobs::parse_node_report(agent::render_node_report(node, {}, {"node-c", 1, false, Millis(5'000), 1}));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_TRUE(parsed->ranks[0].gpu);
  EXPECT_EQ(parsed->ranks[0].gpu->index, 1);
  EXPECT_EQ(parsed->ranks[0].gpu->memory_used, 70'000'000'000u);
  EXPECT_EQ(parsed->ranks[0].gpu->source, "nvml");
  const jobs::GpuReport& x = parsed->gpus[0];
  EXPECT_EQ(x.pci_bus_id, "00000000:8A:00.0");
  EXPECT_EQ(x.uuid, "GPU-1234");
  EXPECT_EQ(x.temperature_c, 84);
  EXPECT_EQ(x.slowdown_temperature_c, 87);
  EXPECT_EQ(x.clock_event_reasons, std::vector<std::string>{"hw_thermal_slowdown"});
  ASSERT_TRUE(x.row_remap);
  EXPECT_TRUE(x.row_remap->pending);
  EXPECT_EQ(x.row_remap->uncorrectable, 1u);
  EXPECT_TRUE(x.retired_pages && x.retired_pages->pending);
  EXPECT_EQ(x.pcie.replays, 7u);
  EXPECT_EQ(x.pcie.gen, 4);
  EXPECT_EQ(x.recovery_action, "node_reboot");
  ASSERT_TRUE(x.nvlinks);
  EXPECT_EQ(x.nvlinks->count, 3);
  EXPECT_EQ(x.nvlinks->active, 1);
  EXPECT_EQ(x.nvlinks->down, std::vector<int>{1}) << "link 2 was never up";
  EXPECT_EQ(x.nvlinks->errors, 3u);
  ASSERT_EQ(x.xids.size(), 2u);
  EXPECT_EQ(x.xids[1].code, 79);
  EXPECT_EQ(x.xids[1].age_ms, 300);
  ASSERT_EQ(parsed->ib_ports.size(), 1u);
  EXPECT_EQ(parsed->ib_ports[0].name(), "mlx5_0/1");
  EXPECT_TRUE(parsed->ib_ports[0].active() && parsed->ib_ports[0].was_active);
  EXPECT_EQ(parsed->ib_ports[0].rate_gbps, 400);
  EXPECT_EQ(parsed->ib_ports[0].link_downed_rise, 2);
}

// The launcher's identity travels with each rank; a slot from an older library has none, and
// the server then knows no attempt rather than guessing the first.
TEST(SchemaContract, LaunchIdentityArrivesOnlyWhenTheSlotHasOne) {
  agent::NodeSnapshot node;
  node.job = "llama";
  node.now_ms = 1'700'000'010'000;
  agent::RankView with;
  with.slot.owner = 1;
  with.slot.rank = 0;
  with.slot.has_identity = true;
  with.slot.attempt = 2;
  with.slot.node_rank = 1;
  with.slot.run_id = "8812345";
  agent::RankView without = with;
  without.slot.owner = 2;
  without.slot.rank = 1;
  without.slot.has_identity = false;
  node.ranks = {with, without};

  auto parsed =
      jobs::parse_node_report(agent::render_node_report(node, {}, {"node-2", 1, false, Millis(5'000), 1}));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->ranks.size(), 2u);
  EXPECT_EQ(parsed->ranks[0].attempt, 2);
  EXPECT_EQ(parsed->ranks[0].run_id, "8812345");
  EXPECT_EQ(parsed->ranks[0].node_rank, 1);
  EXPECT_FALSE(parsed->ranks[1].attempt);
  EXPECT_EQ(parsed->ranks[1].run_id, "");
  EXPECT_FALSE(parsed->ranks[1].node_rank);
}

// The non-finite count and the first step of the latest run cross over with the run's age;
// a slot from an older library sends none of them, and one without a bad step no step.
TEST(SchemaContract, NonFiniteLossesArriveWithTheRunsFirstStepAndAge) {
  agent::NodeSnapshot node;
  node.job = "llama";
  node.now_ms = 1'700'000'010'000;
  agent::RankView bad;
  bad.slot.owner = 1;
  bad.slot.rank = 0;
  bad.slot.has_nonfinite = true;
  bad.slot.nonfinite_total = 14;
  bad.slot.nonfinite_first_step = 120;
  bad.slot.nonfinite_first_report = 121;
  bad.nonfinite_first_ms = node.now_ms - 2'300;
  agent::RankView clean = bad;
  clean.slot.owner = 2;
  clean.slot.rank = 1;
  clean.slot.nonfinite_total = 0;
  clean.slot.nonfinite_first_step = -1;
  clean.nonfinite_first_ms = 0;
  agent::RankView old = clean;
  old.slot.owner = 3;
  old.slot.rank = 2;
  old.slot.has_nonfinite = false;
  node.ranks = {bad, clean, old};

  auto parsed =
      jobs::parse_node_report(agent::render_node_report(node, {}, {"node-2", 1, false, Millis(5'000), 1}));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->ranks.size(), 3u);
  EXPECT_EQ(parsed->ranks[0].nonfinite_total, 14u);
  EXPECT_EQ(parsed->ranks[0].nonfinite_first_step, 120);
  EXPECT_EQ(parsed->ranks[0].nonfinite_first_age_ms, 2'300);
  EXPECT_EQ(parsed->ranks[1].nonfinite_total, 0u);
  EXPECT_FALSE(parsed->ranks[1].nonfinite_first_step);
  EXPECT_FALSE(parsed->ranks[2].nonfinite_total);
  EXPECT_FALSE(parsed->ranks[2].nonfinite_first_step);
}

// A rank's DataLoader workers' stacks ride in its stack object, each with its pid; a
// report with more children than the bound is refused rather than cut.
TEST(SchemaContract, ChildStacksArriveWithTheRanksStack) {
  agent::NodeSnapshot node;
  node.job = "llama";
  node.now_ms = 1'700'000'010'000;
  agent::RankView rank;
  rank.slot.owner = 1;
  rank.slot.rank = 0;
  rank.slot.pid = 4100;
  PyStack py;
  py.threads.push_back({true, {{"/usr/lib/python3.11/multiprocessing/queues.py", 113, "get"}}});
  rank.stack = std::make_shared<const PyStack>(py);
  rank.stack_ms = node.now_ms - 400;
  PyStack worker;
  worker.threads.push_back({true, {{"/work/data.py", 12, "__getitem__"}}});
  rank.children =
      std::make_shared<const std::vector<ChildPyStack>>(std::vector<ChildPyStack>{{4200, worker}});
  node.ranks = {rank};

  auto parsed =
      jobs::parse_node_report(agent::render_node_report(node, {}, {"node-2", 1, false, Millis(5'000), 1}));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_TRUE(parsed->ranks[0].stack);
  const auto& children = parsed->ranks[0].stack->children;
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(children[0].pid, 4200);
  ASSERT_EQ(children[0].stack.threads.size(), 1u);
  EXPECT_EQ(children[0].stack.threads[0].frames[0].function, "__getitem__");
  EXPECT_EQ(children[0].stack.threads[0].frames[0].line, 12);

  rank.children =
      std::make_shared<const std::vector<ChildPyStack>>(kMaxChildStacks + 1, ChildPyStack{4200, worker});
  node.ranks = {rank};
  EXPECT_FALSE(
      jobs::parse_node_report(agent::render_node_report(node, {}, {"node-2", 1, false, Millis(5'000), 1})));
}

// Native frames ride in the rank's stack object beside the Python ones, with the note of
// whatever went wrong while they were taken; a rank whose Python capture failed still
// sends its native frames.
TEST(SchemaContract, NativeFramesArriveBesideThePythonStack) {
  agent::NodeSnapshot node;
  node.job = "llama";
  node.now_ms = 1'700'000'010'000;
  agent::RankView both;
  both.slot.owner = 1;
  both.slot.rank = 0;
  both.slot.pid = 4100;
  PyStack py;
  py.threads.push_back({true, {{"/work/data.py", 31, "fetch_next_shard"}}});
  both.stack = std::make_shared<const PyStack>(py);
  both.stack_ms = node.now_ms - 400;
  NativeStack native;
  native.truncated = true;
  native.threads.push_back(
      {4100, {{"clock_nanosleep@GLIBC_2.2.5", "libc.so.6"}, {"0x5d64b4", "python3.11"}}});
  native.threads.push_back({4102, {{"pthread_cond_wait", "libc.so.6"}}});
  both.native = std::make_shared<const NativeStack>(native);
  agent::RankView native_only = both;
  native_only.slot.owner = 2;
  native_only.slot.rank = 1;
  native_only.stack.reset();
  native_only.stack_note = "no dump within 300 ms of the signal";
  native_only.native_note =
      "eu-stack took longer than 2000 ms: killed; the rank was left stopped and was sent SIGCONT";
  node.ranks = {both, native_only};

  auto parsed =
      jobs::parse_node_report(agent::render_node_report(node, {}, {"node-2", 1, false, Millis(5'000), 1}));
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->ranks.size(), 2u);
  ASSERT_TRUE(parsed->ranks[0].stack);
  const jobs::RankStack& a = *parsed->ranks[0].stack;
  EXPECT_EQ(a.age_ms, 400);
  ASSERT_EQ(a.stack.threads.size(), 1u);
  EXPECT_EQ(a.stack.threads[0].frames[0].function, "fetch_next_shard");
  EXPECT_TRUE(a.native.truncated);
  ASSERT_EQ(a.native.threads.size(), 2u);
  EXPECT_EQ(a.native.threads[0].tid, 4100);
  ASSERT_EQ(a.native.threads[0].frames.size(), 2u);
  EXPECT_EQ(a.native.threads[0].frames[0].function, "clock_nanosleep@GLIBC_2.2.5");
  EXPECT_EQ(a.native.threads[0].frames[0].module, "libc.so.6");
  EXPECT_EQ(a.native.threads[0].frames[1].function, "0x5d64b4");
  EXPECT_EQ(a.native.threads[1].tid, 4102);
  EXPECT_EQ(a.native_note, "");
  ASSERT_TRUE(parsed->ranks[1].stack);
  const jobs::RankStack& b = *parsed->ranks[1].stack;
  EXPECT_TRUE(b.stack.threads.empty());
  EXPECT_EQ(b.note, "no dump within 300 ms of the signal");
  EXPECT_EQ(b.native.threads.size(), 2u);
  EXPECT_EQ(b.native_note, native_only.native_note);
}

// The server holds native frames to the same bounds as the agent: a report with more is refused.
TEST(SchemaContract, NativeFramesPastTheBoundsAreRefused) {
  std::string frames;
  for (size_t i = 0; i <= kMaxNativeFrames; ++i)
    frames += std::string(i ? "," : "") + R"({"function":"f","module":"m"})";
  const std::string body =
      R"({"schema":1,"job":"j","node":"n","seq":1,"ranks":[{"rank":0,"status":"training",)"
      R"("stack":{"age_ms":1,"native":{"threads":[{"tid":1,"frames":[)" +
      frames + "]}]}}}]}";
  auto parsed = jobs::parse_node_report(body);
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("frames"), std::string::npos) << parsed.error().message;
}

}  // namespace
}  // namespace trainwatch
