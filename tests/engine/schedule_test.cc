#include "engine/schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace trainwatch::engine {
namespace {

TEST(FirstCheckOffset, SpreadsTenThousandMonitorsEvenlyOverTheWindow) {
  const size_t count = 10'000;
  std::map<int64_t, int> per_second;
  for (size_t i = 0; i < count; ++i) {
    Millis offset = first_check_offset(i, count, Millis(10'000));
    ASSERT_GE(offset.count(), 0);
    ASSERT_LT(offset.count(), 10'000);
    ++per_second[offset.count() / 1000];
  }
  // 10 seconds, 1,000 first checks in each: never all at once.
  ASSERT_EQ(per_second.size(), 10u);
  for (const auto& [second, n] : per_second) EXPECT_EQ(n, 1000) << second;
}

TEST(FirstCheckOffset, ShortIntervalsSpreadWithinTheirInterval) {
  EXPECT_EQ(first_check_offset(0, 4, Millis(1000)), Millis(0));
  EXPECT_EQ(first_check_offset(3, 4, Millis(1000)), Millis(750));
  EXPECT_EQ(first_check_offset(0, 0, Millis(1000)), Millis(0));
}

TEST(NextDue, RunsAtAFixedRate) {
  MonoTime start{};
  EXPECT_EQ(next_due(start, Millis(1000), start + Millis(30)), start + Millis(1000));
}

TEST(NextDue, SkipsSlotsAlreadyMissed) {
  MonoTime start{};
  // Due at 0, interval 1s, but it is 3.5s now: the next slot is 4s, not 1s, 2s, 3s in a burst.
  EXPECT_EQ(next_due(start, Millis(1000), start + Millis(3500)), start + Millis(4000));
  EXPECT_EQ(next_due(start, Millis(1000), start + Millis(1000)), start + Millis(2000));
}

TEST(NextDue, ACheckThatStartedLateIsNotFollowedByAnotherWithinHalfAnInterval) {
  MonoTime start{};
  // Due at 0 with a 2 s interval, started 1.5 s late (a pause): the slot at 2 s would come
  // half a second after it, so the next check is at 4 s.
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(1500)), start + Millis(4000));
  // On time, or late by less than half an interval: the next slot, on the grid.
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(5)), start + Millis(2000));
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(900)), start + Millis(2000));
  // Late by slots already missed: the first slot half an interval past now.
  EXPECT_EQ(next_due_after_start(start, Millis(2000), start + Millis(5500)), start + Millis(8000));
}

// A monitor taken over from another replica: interval 10 s, no check within a 1.5 s gap,
// an owner unchecked for 2 intervals and 10 s counts as stopped with the installation.
constexpr Millis kEvery{10'000};
constexpr Millis kGap{1'500};
constexpr Millis kWindow{10'000};

TEST(HandoverSlots, KeepsThisReplicasSlotsPastTheGap) {
  const MonoTime now = MonoTime{} + Millis(100'000);
  // Never checked: no slot of a last owner to respect.
  HandoverSlots slots = handover_slots(now + Millis(3'000), kEvery, now, std::nullopt, {kGap, kWindow});
  EXPECT_EQ(slots.mine, now + Millis(3'000));
  EXPECT_FALSE(slots.theirs);
  // A slot within the gap, or already past, moves to the first one after it.
  EXPECT_EQ(handover_slots(now + Millis(1'000), kEvery, now, std::nullopt, {kGap, kWindow}).mine,
            now + Millis(11'000));
  EXPECT_EQ(handover_slots(now - Millis(3'000), kEvery, now, std::nullopt, {kGap, kWindow}).mine,
            now + Millis(7'000));
}

TEST(HandoverSlots, ChecksRightAfterTheGapWhenTheOwnerMissedASlot) {
  const MonoTime now = MonoTime{} + Millis(100'000);
  HandoverSlots slots = handover_slots(now + Millis(7'000), kEvery, now, Millis(15'000), {kGap, kWindow});
  EXPECT_EQ(slots.mine, now + Millis(7'000));
  EXPECT_EQ(slots.theirs, now + kGap);
  // Unchecked for two intervals and the window: the whole installation stopped.
  EXPECT_FALSE(handover_slots(now + Millis(7'000), kEvery, now, Millis(30'000), {kGap, kWindow}).theirs);
}

TEST(HandoverSlots, ASlotPassedTooRecentlyToShowInTheStoreCountsAsChecked) {
  const MonoTime now = MonoTime{} + Millis(100'000);
  // The owner's results show up to 3 s after their slot. Its last stored check is 10.5 s
  // old: the slot after it passed 0.5 s ago, most likely checked as the owner let go, so
  // the check waits for the owner's next slot (this replica's own, 3.5 s after that
  // passed slot, is too close to it).
  const Handover rule{kGap, kWindow, Millis(0), Millis(3'000)};
  EXPECT_EQ(handover_slots(now + Millis(3'000), kEvery, now, Millis(10'500), rule).theirs,
            now + Millis(9'500));
  // Passed 4 s ago, it would have shown: the owner stopped, so right after the gap.
  EXPECT_EQ(handover_slots(now + Millis(3'000), kEvery, now, Millis(14'000), rule).theirs, now + kGap);
  // A store that shows results at once leaves no such doubt.
  EXPECT_EQ(handover_slots(now + Millis(3'000), kEvery, now, Millis(10'500), {kGap, kWindow}).theirs,
            now + kGap);
}

TEST(HandoverSlots, MonitorsWhoseOwnerStoppedAreCheckedSpreadOverASecondNotAtOnce) {
  const MonoTime now = MonoTime{} + Millis(100'000);
  // Eight monitors taken over together, each missed its slot: 125 ms apart after the gap.
  std::vector<MonoTime> firsts;
  for (size_t i = 0; i < 8; ++i) {
    const Handover rule{kGap, kWindow, takeover_stagger(i, 8, kEvery)};
    firsts.push_back(*handover_slots(now + Millis(7'000), kEvery, now, Millis(15'000), rule).theirs);
  }
  EXPECT_EQ(firsts.front(), now + kGap);
  for (size_t i = 1; i < firsts.size(); ++i) EXPECT_EQ(firsts[i] - firsts[i - 1], Millis(125));
  // A short interval spreads over half of it: 2 s monitors within a second, 1 s ones
  // within half a second, so none is checked much later than an interval after its owner stopped.
  EXPECT_EQ(takeover_stagger(7, 8, Millis(2'000)), Millis(875));
  EXPECT_EQ(takeover_stagger(4, 8, Millis(1'000)), Millis(250));
  // A slot the owner would still keep is not moved by the stagger.
  const Handover late{kGap, kWindow, Millis(900)};
  EXPECT_EQ(handover_slots(now + Millis(8'000), kEvery, now, Millis(4'000), late).theirs,
            now + Millis(6'000));
}

TEST(HandoverSlots, ChecksAtTheOwnersSlotUnlessThisReplicasComesFirstAndHalfAnIntervalAfterTheirs) {
  const MonoTime now = MonoTime{} + Millis(100'000);
  // Checked 4 s ago: its owner's next slot is in 6 s, its one before 4 s ago.
  EXPECT_FALSE(handover_slots(now + Millis(2'000), kEvery, now, Millis(4'000), {kGap, kWindow}).theirs);
  EXPECT_EQ(handover_slots(now + Millis(8'000), kEvery, now, Millis(4'000), {kGap, kWindow}).theirs,
            now + Millis(6'000));
  // Checked 9 s ago: its owner's next slot falls in the gap, so the one after; this
  // replica's slot in 3 s is 2 s after the owner's last check: too close.
  EXPECT_EQ(handover_slots(now + Millis(3'000), kEvery, now, Millis(9'000), {kGap, kWindow}).theirs,
            now + Millis(11'000));
}

TEST(SlotAfterHandover, SkipsThisReplicasSlotWithinHalfAnIntervalOfTheCheck) {
  const MonoTime now = MonoTime{} + Millis(100'000);
  EXPECT_EQ(slot_after_handover(now + Millis(7'000), kEvery, now + Millis(1'500)), now + Millis(7'000));
  EXPECT_EQ(slot_after_handover(now + Millis(5'000), kEvery, now + Millis(1'500)), now + Millis(15'000));
  EXPECT_EQ(slot_after_handover(now + Millis(3'000), kEvery, now + Millis(11'000)), now + Millis(23'000));
}

}  // namespace
}  // namespace trainwatch::engine
