// The node agent's /health and the server's job analysis judge one rank's process by one
// rule (core/rank_rule.h): for the same facts they name the same rank codes, with the
// same severity. Each case is fed to both sides in their own input form.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "agent/health.h"
#include "core/rank_rule.h"
#include "jobs/analysis.h"
#include "jobs/job_state.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch {
namespace {

constexpr int kExitUnknown = -2;

struct Facts {
  const char* what;
  bool alive;
  jobs::RankStatus status;
  char state;
  int64_t no_step_for_ms;
  int exit_code = kExitUnknown;  // once gone, what the kernel said (agent/exit_watch.h)
};

struct Codes {
  std::set<std::string> down, warning;
  bool operator==(const Codes&) const = default;
};

const std::set<std::string> kRankCodes = {"rank_gone", "rank_failed", "rank_stopped", "rank_blocked"};

Codes agent_codes(const Facts& f) {
  agent::NodeSnapshot node;
  node.job = "job";
  node.now_ms = 1'800'000'000'000;
  agent::RankView r;
  r.slot.rank = 0;
  r.slot.pid = 100;
  r.slot.status = static_cast<uint32_t>(f.status);  // both enums follow tw_run_status
  r.slot.step = 10;
  r.slot.status_changed_ms = node.now_ms - f.no_step_for_ms;
  r.alive = f.alive;
  r.state = f.alive ? f.state : '?';
  r.last_step_ms = node.now_ms - f.no_step_for_ms;
  if (!f.alive && f.exit_code != kExitUnknown) r.exit = ProcessExit{f.exit_code, 0, false, false};
  node.ranks.push_back(r);
  const agent::HealthReport h = agent::evaluate(node, agent::Thresholds{});
  Codes out;
  for (const auto& reason : h.reasons) {
    if (kRankCodes.count(reason.code)) out.down.insert(reason.code);
  }
  for (const auto& reason : h.warnings) {
    if (kRankCodes.count(reason.code)) out.warning.insert(reason.code);
  }
  return out;
}

Codes server_codes(const Facts& f) {
  const MonoTime now = MonoTime{} + std::chrono::hours(1);
  const SystemTime wall = SystemTime{} + std::chrono::hours(500'000);
  jobs::JobState job("job", now - std::chrono::minutes(30));
  jobs::NodeReport report;
  report.node = "node-a";
  report.report_every = Millis(5'000);
  jobs::RankReport r;
  r.rank = 0;
  r.pid = 100;
  r.alive = f.alive;
  r.state = f.alive ? f.state : '?';
  r.status = f.status;
  r.step = 10;
  r.step_reports = 11;
  r.last_step_age_ms = f.no_step_for_ms;
  if (!f.alive) r.gone_age_ms = 0;
  if (!f.alive && f.exit_code != kExitUnknown) r.exit = ProcessExit{f.exit_code, 0, false, false};
  report.ranks.push_back(r);
  EXPECT_TRUE(job.ingest(report, now, wall));
  const jobs::JobVerdict v = jobs::analyse(job, JobCheckSpec{}, now, wall);
  Codes out;
  for (const auto& finding : v.findings) {
    const std::string code(jobs::to_string(finding.code));  // the text the API and the agent both show
    if (!kRankCodes.count(code)) continue;
    (finding.severity == jobs::Severity::kDown ? out.down : out.warning).insert(code);
  }
  return out;
}

TEST(RankRuleAgreement, TheAgentAndTheServerNameTheSameRankCodes) {
  using jobs::RankStatus;
  const int64_t brief = 2'000, long_ago = kBlockedAfter.count() + 30'000;
  const struct {
    Facts facts;
    Codes expected;
  } cases[] = {
      {{"training, sleeping", true, RankStatus::kTraining, 'S', brief}, {}},
      {{"in D for moments (I/O)", true, RankStatus::kTraining, 'D', brief}, {}},
      {{"in D with no step past kBlockedAfter", true, RankStatus::kTraining, 'D', long_ago},
       {{"rank_blocked"}, {}}},
      {{"in D long while checkpointing", true, RankStatus::kCheckpointing, 'D', long_ago},
       {{}, {"rank_blocked"}}},
      {{"stopped", true, RankStatus::kTraining, 'T', brief}, {{"rank_stopped"}, {}}},
      {{"stopped by a debugger", true, RankStatus::kTraining, 't', long_ago}, {{"rank_stopped"}, {}}},
      {{"dead pid while training", false, RankStatus::kTraining, 'R', brief}, {{"rank_gone"}, {}}},
      {{"dead pid after finishing", false, RankStatus::kFinished, 'R', long_ago}, {}},
      {{"failed", true, RankStatus::kFailed, 'S', brief}, {{"rank_failed"}, {}}},
      {{"failed and gone", false, RankStatus::kFailed, 'R', brief}, {{"rank_failed"}, {}}},
      // An exit is a fact: code 0 is finished whatever the slot last said; others are not.
      {{"exited 0 while training", false, RankStatus::kTraining, 'R', brief, 0}, {}},
      {{"exited 1 while training", false, RankStatus::kTraining, 'R', brief, 1}, {{"rank_gone"}, {}}},
  };
  for (const auto& c : cases) {
    const Codes agent = agent_codes(c.facts), server = server_codes(c.facts);
    EXPECT_TRUE(agent == c.expected) << c.facts.what << ": the agent disagrees with the rule";
    EXPECT_TRUE(server == c.expected) << c.facts.what << ": the server disagrees with the rule";
  }
}

}  // namespace
}  // namespace trainwatch
