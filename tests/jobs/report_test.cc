#include <cmath>

#include <gtest/gtest.h>

#include "jobs/rank_set.h"
#include "jobs/report.h"

namespace trainwatch::jobs {
namespace {

TEST(Report, ParsesEveryFieldAndNonFiniteLoss) {
  auto r = parse_node_report(R"({"schema":1,"job":"llama","node":"node-a","seq":3,"final":true,"agent_pid":9,
    "report_every_ms":1000,
    "ranks":[{"rank":2,"local_rank":0,"world_size":4,"pid":41231,"alive":false,"state":"?","status":"training",
              "step":1023,"step_reports":1024,"last_step_age_ms":700,"max_step_gap_ms":400,"gone_age_ms":150,
              "cpu_s":12.5,"loss":"NaN","loss_scale":65536,"overflow_consecutive":2,
              "checkpoint":{"state":"ok","step":1000,"duration_ms":800,"last_ok_step":1000,"last_ok_age_ms":9000},
              "error":{"message":"boom","age_ms":10},
              "exit":{"signal":9,"signal_name":"SIGKILL","core_dumped":false,"oom_killed":true}}],
    "gpus":[{"index":0,"memory_used_bytes":96,"memory_total_bytes":100,"last_xid":79,"last_xid_critical":true}],
    "disks":[{"name":"checkpoint_dir","path":"/ckpt","ok":true,"free_bytes":5}],
    "memory":{"available_bytes":7,"total_bytes":8},
    "rendezvous":{"host":"127.0.0.1","port":29500,"listening":false}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->node, "node-a");
  EXPECT_TRUE(r->final);
  EXPECT_EQ(r->report_every, Millis(1000));
  ASSERT_EQ(r->ranks.size(), 1u);
  const RankReport& rank = r->ranks[0];
  EXPECT_EQ(rank.rank, 2);
  EXPECT_FALSE(rank.alive);
  EXPECT_EQ(rank.status, RankStatus::kTraining);
  EXPECT_EQ(rank.step, 1023);
  EXPECT_EQ(rank.gone_age_ms, 150);
  EXPECT_TRUE(std::isnan(*rank.loss));
  EXPECT_EQ(rank.checkpoint.state, CheckpointState::kOk);
  EXPECT_EQ(rank.checkpoint.duration_ms, 800);
  EXPECT_EQ(rank.error, "boom");
  ASSERT_TRUE(rank.exit);
  EXPECT_EQ(rank.exit->signal, 9);
  EXPECT_TRUE(rank.exit->oom_killed);
  EXPECT_DOUBLE_EQ(r->gpus[0].memory_pct(), 96.0);
  EXPECT_TRUE(r->gpus[0].last_xid_critical);
  EXPECT_EQ(r->disks[0].free_bytes, 5u);
  EXPECT_EQ(r->memory_available_bytes, 7u);
  EXPECT_FALSE(r->rendezvous->listening);
}

TEST(Report, NonFiniteCountAndFirstStepAreOptionalAndBounded) {
  auto r = parse_node_report(R"({"schema":1,"node":"a","ranks":[
    {"rank":0,"status":"training","loss":"NaN","nonfinite_total":14,"nonfinite_first_step":120,
     "nonfinite_first_age_ms":2300},
    {"rank":1,"status":"training","nonfinite_total":0},
    {"rank":2,"status":"training"},
    {"rank":3,"status":"training","nonfinite_total":1,"nonfinite_first_step":1e300,
     "nonfinite_first_age_ms":99999999999999},
    {"rank":4,"status":"training","nonfinite_total":1,"nonfinite_first_step":-7}]})");
  ASSERT_TRUE(r) << r.error().message;
  const auto& ranks = r->ranks;
  EXPECT_EQ(ranks[0].nonfinite_total, 14u);
  EXPECT_EQ(ranks[0].nonfinite_first_step, 120);
  EXPECT_EQ(ranks[0].nonfinite_first_age_ms, 2300);
  EXPECT_EQ(ranks[1].nonfinite_total, 0u);
  EXPECT_FALSE(ranks[1].nonfinite_first_step) << "none yet";
  EXPECT_FALSE(ranks[2].nonfinite_total) << "an older agent or library: unknown, not 0";
  EXPECT_EQ(ranks[3].nonfinite_first_step, kMaxStep) << "clamped like every step";
  EXPECT_EQ(ranks[3].nonfinite_first_age_ms, kMaxAgeMs) << "clamped like every age";
  EXPECT_FALSE(ranks[4].nonfinite_first_step) << "a step below 0 is no step";

  auto bad = parse_node_report(
      R"({"schema":1,"node":"a","ranks":[{"rank":0,"status":"training","nonfinite_total":-1}]})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "ranks[0].nonfinite_total: expected an integer from 0 to 9223372036854775807, found -1");
  bad = parse_node_report(
      R"({"schema":1,"node":"a","ranks":[{"rank":0,"status":"training","nonfinite_first_step":"120"}]})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "ranks[0].nonfinite_first_step: expected an integer, found a string");
}

TEST(Report, ErrorsSayWhatIsWrongAndWhere) {
  struct Case {
    const char* body;
    const char* code;
    const char* message;
  };
  const Case cases[] = {
      {"{", "report.json", "the body is not valid JSON"},
      {"[1]", "report.json", "the body must be a JSON object, found a list"},
      {R"({"node":"a"})", "report.schema", "schema: missing"},
      {R"({"schema":2,"node":"a"})", "report.schema",
       "schema: unknown version 2; this server reads version 1"},
      {R"({"schema":1})", "report.invalid", "node: missing"},
      {R"({"schema":1,"node":"a","ranks":[{"rank":"x","status":"training"}]})", "report.invalid",
       "ranks[0].rank: expected an integer from 0 to 999999, found a string"},
      {R"({"schema":1,"node":"a","ranks":[{"rank":1,"status":"dancing"}]})", "report.invalid",
       "ranks[0].status: found 'dancing'; expected initializing, training, checkpointing, evaluating, finished or failed"},
      {R"({"schema":1,"node":"a","ranks":[{"rank":1,"status":"training","loss":"lots"}]})", "report.invalid",
       "ranks[0].loss: expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", found a string"},
      {R"({"schema":1,"node":"a","ranks":7})", "report.invalid", "ranks: expected a list, found 7"},
      {R"({"schema":1,"node":"a","ranks":[{"rank":1,"status":"training","attempt":-1}]})", "report.invalid",
       "ranks[0].attempt: expected an integer from 0 to 2147483647, found -1"},
      {R"({"schema":1,"node":"a","ranks":[{"rank":1,"status":"training","exit":{"signal":99}}]})",
       "report.invalid", "ranks[0].exit.signal: expected an integer from 1 to 64, found 99"},
      {R"({"schema":1,"node":"a","ranks":[{"rank":1,"status":"training","exit":{}}]})", "report.invalid",
       "ranks[0].exit.code: missing"},
  };
  for (const auto& c : cases) {
    auto r = parse_node_report(c.body);
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().code, c.code) << c.body;
    EXPECT_EQ(r.error().message.rfind(c.message, 0), 0u) << r.error().message;
  }
}

TEST(Report, ListsAreBounded) {
  std::string body = R"({"schema":1,"node":"a","gpus":[)";
  for (size_t i = 0; i <= kMaxGpusPerReport; ++i) body += std::string(i ? "," : "") + R"({"index":0})";
  body += "]}";
  auto r = parse_node_report(body);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "gpus: has 65 entries; at most 64 are accepted");
}

TEST(Report, RemovedSlotNotesAreReadAndOtherNotesSkipped) {
  auto r = parse_node_report(R"json({"schema":1,"node":"a","notes":[
      {"code":"slot_invalid","message":"slot 5 of /dev/shm/trainwatch/0/j.slots is invalid (...)"},
      {"code":"slot_removed","message":"rank 3 ...","rank":3,"pid":4120,"path":"/dev/shm/trainwatch/0/j.slots"},
      {"code":"from_a_later_agent"}]})json");
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->slots_removed.size(), 1u);
  EXPECT_EQ(r->slots_removed[0].rank, 3);
  EXPECT_EQ(r->slots_removed[0].pid, 4120);
  EXPECT_EQ(r->slots_removed[0].path, "/dev/shm/trainwatch/0/j.slots");

  auto bad = parse_node_report(R"({"schema":1,"node":"a","notes":[{"code":"slot_removed","pid":1}]})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message.rfind("notes[0].rank", 0), 0u) << bad.error().message;
}

TEST(RankSet, RunsBecomeRanges) {
  EXPECT_EQ(format_rank_set({0, 1, 2, 3, 4, 6, 7}), "0-4,6-7");
  EXPECT_EQ(format_rank_set({5, 3, 3, 9}), "3,5,9");
  EXPECT_EQ(format_rank_set({}), "");
  EXPECT_EQ(ranks_phrase({5}), "rank 5");
  EXPECT_EQ(ranks_phrase({0, 1, 3}), "ranks 0-1,3");
}

}  // namespace
}  // namespace trainwatch::jobs
