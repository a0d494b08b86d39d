#include "core/rank_rule.h"

namespace trainwatch {

RankRuling rule_rank(const RankFacts& f) {
  if (f.failed) return RankRuling::kFailed;
  if (f.finished || (!f.alive && f.exited_ok)) return RankRuling::kDone;
  if (!f.alive) return RankRuling::kGone;
  if (f.state == 'T' || f.state == 't') return RankRuling::kStopped;
  if (f.state == 'D' && f.no_step_for && *f.no_step_for > kBlockedAfter) {
    return f.checkpointing ? RankRuling::kBlockedCheckpointing : RankRuling::kBlocked;
  }
  return RankRuling::kRunning;
}

bool is_down(RankRuling ruling) {
  switch (ruling) {
    case RankRuling::kFailed:
    case RankRuling::kGone:
    case RankRuling::kStopped:
    case RankRuling::kBlocked: return true;
    case RankRuling::kRunning:
    case RankRuling::kDone:
    case RankRuling::kBlockedCheckpointing: return false;
  }
  return false;
}

std::string_view ruling_code(RankRuling ruling) {
  switch (ruling) {
    case RankRuling::kFailed: return "rank_failed";
    case RankRuling::kGone: return "rank_gone";
    case RankRuling::kStopped: return "rank_stopped";
    case RankRuling::kBlocked:
    case RankRuling::kBlockedCheckpointing: return "rank_blocked";
    case RankRuling::kRunning:
    case RankRuling::kDone: return "";
  }
  return "";
}

}  // namespace trainwatch
