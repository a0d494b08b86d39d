// The one rule for whether a rank's process is holding its job up, from the facts both
// the node agent (GET /health, agent/health.h) and the server's job analysis
// (jobs/analysis.h) see. Both call this, so a rank cannot read 503 on its node's /health
// while the server calls its job up, or the other way round. Pure; any thread.
//
// The rule, first match wins:
//   failed (reported)                          -> kFailed, down
//   process gone, not finished, not exited 0   -> kGone, down (it died without a word)
//   finished, or gone with exit code 0         -> kDone: an exit is a fact, whatever the slot
//                                                 last said (a program that never set its
//                                                 status, os._exit(0), a launcher's wrapper)
//   stopped (state T or t)                     -> kStopped, down at once: a stopped rank holds
//                                                 every peer in its next collective for ever
//   uninterruptible sleep (state D) with no step for more than kBlockedAfter
//                                              -> kBlocked, down; kBlockedCheckpointing, a
//                                                 warning, while it writes a checkpoint (that
//                                                 is I/O, and the checkpoint timeout judges it)
//   otherwise                                  -> kRunning (D for moments is normal I/O)
#pragma once

#include <optional>
#include <string_view>

#include "core/clock.h"

namespace trainwatch {

// How long a process may sit in state D without a step before it counts as hung.
inline constexpr Millis kBlockedAfter{30'000};

struct RankFacts {
  bool alive = false;     // the process exists
  bool finished = false;  // its last reported status
  bool failed = false;
  bool exited_ok = false;             // gone, and the kernel said with exit code 0
  bool checkpointing = false;         // writing a checkpoint now
  char state = '?';                   // /proc/<pid>/stat state letter
  std::optional<Millis> no_step_for;  // since its last step; nullopt when none was seen
};

enum class RankRuling { kRunning, kDone, kFailed, kGone, kStopped, kBlocked, kBlockedCheckpointing };

RankRuling rule_rank(const RankFacts& facts);

// Whether the ruling makes the rank (and so its node's /health and its job) down.
bool is_down(RankRuling ruling);

// The stable code both sides report the ruling under ("rank_blocked"...); "" for kRunning
// and kDone. The server's findings carry the same texts as typed codes (jobs/finding_code.h);
// tests/agent/rank_rule_agreement_test.cc holds the two equal.
std::string_view ruling_code(RankRuling ruling);

}  // namespace trainwatch
