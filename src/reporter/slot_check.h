// The invariants of a slot as its library writes it, checked by the reader before a slot
// becomes a rank. A slot is only as trustworthy as the file it sits in: any process of the
// user can write the file, and a stray write (or random bytes) would otherwise be read as
// "rank 1588945316 (pid 2834429) is gone at step -2563689611442653142". A slot that fails
// one is `slot_invalid`: the agent says so once, with the file and the slot number, and
// never shows it as a rank. Pure.
//
// The invariants (slot_problem):
//   owner        pid > 0 and a start time (pack_owner)
//   place        0 < world_size <= kMaxWorldSize, 0 <= rank < world_size, local_rank = the slot's index
//   enums        status, checkpoint state and present bits are ones the library writes
//   steps        every step >= -1; the non-finite record within the step calls
//   times        started_at within [kEarliestSlotMs, kLatestSlotMs]; every other time 0 or within
//                [started_at - kSlotClockSlack, kLatestSlotMs] (wall clocks step back). Bounds of
//                the calendar, not of the reader's clock: the writer's clock is its own.
//   text         the identity (job, master_addr, run_id) well-formed UTF-8 that ends within its field
// and between two reads of the same owner (slot_regression): the counters (step calls,
// overflows, samples, tokens, non-finite losses) never go back and started_at never changes.
// Free text a program hands the library (its error, a checkpoint path, gauge names) may be
// in any encoding, so ill-formed bytes there are replaced (repair_slot_text), not refused.
#pragma once

#include <cstdint>
#include <string>

#include "reporter/slot_reader.h"

namespace trainwatch::reporter {

inline constexpr int32_t kMaxWorldSize = 1 << 24;
inline constexpr int64_t kEarliestSlotMs = 1'577'836'800'000;  // 2020-01-01: before any slot file
inline constexpr int64_t kLatestSlotMs = 7'258'118'400'000;    // 2200-01-01
inline constexpr int64_t kSlotClockSlack = 24LL * 3'600'000;   // a wall clock stepped back by up to a day

// "" when the slot keeps every invariant; else the first it breaks, as a phrase:
// "rank 1588945316 is outside world size 7".
std::string slot_problem(const SlotSnapshot& slot, uint32_t index);

// "" when `now` can follow `before` (same owner); else what went back.
std::string slot_regression(const SlotSnapshot& before, const SlotSnapshot& now);

// Replaces ill-formed UTF-8 in the free-text fields (and cuts text that fills its field
// without an end), so everything the agent serves is UTF-8.
void repair_slot_text(SlotSnapshot& slot);

}  // namespace trainwatch::reporter
