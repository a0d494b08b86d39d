#include "reporter/slot_check.h"

#include <string_view>
#include <tuple>
#include <utility>

#include "core/utf8.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::reporter {
namespace {

constexpr uint32_t kKnownFields = TW_FIELD_LOSS | TW_FIELD_LOSS_SCALE | TW_FIELD_OVERFLOW |
                                  TW_FIELD_GRAD_NORM | TW_FIELD_SAMPLES | TW_FIELD_TOKENS;

std::string text_problem(std::string_view name, const std::string& text, size_t capacity) {
  if (text.size() > capacity) return std::string(name) + " does not end within its field";
  if (!is_valid_utf8(text)) return std::string(name) + " is not UTF-8";
  return "";
}

std::string time_problem(std::string_view name, int64_t ms, int64_t from, int64_t to) {
  if (ms == 0 || (ms >= from && ms <= to)) return "";
  return std::string(name) + " " + std::to_string(ms) + " is outside [" + std::to_string(from) + ", " +
         std::to_string(to) + "]";
}

std::string step_problem(std::string_view name, int64_t step) {
  return step >= -1 ? "" : std::string(name) + " " + std::to_string(step) + " is below -1";
}

void repair(std::string& text, size_t capacity) {
  if (text.size() > capacity) text.resize(capacity);
  text = utf8_repaired(std::move(text));
}

}  // namespace

std::string slot_problem(const SlotSnapshot& s, uint32_t index) {
  if (s.pid <= 0 || s.start_ticks == 0) return "owner " + std::to_string(s.owner) + " names no process";
  if (s.world_size <= 0 || s.world_size > kMaxWorldSize)
    return "world size " + std::to_string(s.world_size) + " is outside [1, " + std::to_string(kMaxWorldSize) +
           "]";
  if (s.rank < 0 || s.rank >= s.world_size)
    return "rank " + std::to_string(s.rank) + " is outside world size " + std::to_string(s.world_size);
  if (s.local_rank < 0 || static_cast<uint32_t>(s.local_rank) != index)
    return "local rank " + std::to_string(s.local_rank) + " is not the slot's number";
  if (s.status > TW_STATUS_FAILED) return "status " + std::to_string(s.status) + " is unknown";
  if (static_cast<uint32_t>(s.checkpoint_state) > static_cast<uint32_t>(CheckpointState::kFailed))
    return "checkpoint state " + std::to_string(static_cast<uint32_t>(s.checkpoint_state)) + " is unknown";
  if (s.present & ~kKnownFields) return "present fields " + std::to_string(s.present) + " are unknown";
  for (const auto& [name, step] : {std::pair<std::string_view, int64_t>{"step", s.step},
                                   {"checkpoint step", s.checkpoint_step},
                                   {"last good checkpoint step", s.last_ok_checkpoint_step},
                                   {"first non-finite step", s.nonfinite_first_step}}) {
    if (auto p = step_problem(name, step); !p.empty()) return p;
  }
  if (s.nonfinite_first_report > s.step_reports || s.nonfinite_total > s.step_reports)
    return "non-finite losses are counted past the " + std::to_string(s.step_reports) + " step calls";
  const int64_t latest = kLatestSlotMs;
  // Not time_problem: it lets 0 pass as "never", and a slot always has a start time.
  if (s.started_at_ms < kEarliestSlotMs || s.started_at_ms > latest)
    return "start time " + std::to_string(s.started_at_ms) + " is outside [" +
           std::to_string(kEarliestSlotMs) + ", " + std::to_string(latest) + "]";
  const int64_t earliest = s.started_at_ms - kSlotClockSlack;
  for (const auto& [name, ms] : {std::pair<std::string_view, int64_t>{"status time", s.status_changed_ms},
                                 {"error time", s.error_ms},
                                 {"checkpoint begin time", s.checkpoint_begin_ms},
                                 {"checkpoint end time", s.checkpoint_end_ms},
                                 {"last good checkpoint time", s.last_ok_checkpoint_ms}}) {
    if (auto p = time_problem(name, ms, earliest, latest); !p.empty()) return p;
  }
  if (s.has_identity && (s.attempt < 0 || s.node_rank < -1))
    return "attempt " + std::to_string(s.attempt) + " or node rank " + std::to_string(s.node_rank) +
           " is negative";
  for (const auto& [name, text, capacity] :
       {std::tuple<std::string_view, const std::string&, size_t>{"job", s.job, AtomicText<8>::kCapacity},
        {"master address", s.master_addr, AtomicText<8>::kCapacity},
        {"run id", s.run_id, AtomicText<5>::kCapacity}}) {
    if (auto p = text_problem(name, text, capacity); !p.empty()) return p;
  }
  return "";
}

std::string slot_regression(const SlotSnapshot& before, const SlotSnapshot& now) {
  if (now.started_at_ms != before.started_at_ms)
    return "start time moved from " + std::to_string(before.started_at_ms) + " to " +
           std::to_string(now.started_at_ms);
  for (const auto& [name, was, is] :
       {std::tuple<std::string_view, uint64_t, uint64_t>{"step calls", before.step_reports, now.step_reports},
        {"overflows", before.overflow_total, now.overflow_total},
        {"samples", before.samples, now.samples},
        {"tokens", before.tokens, now.tokens},
        {"non-finite losses", before.nonfinite_total, now.nonfinite_total}}) {
    if (is < was)
      return std::string(name) + " went back from " + std::to_string(was) + " to " + std::to_string(is);
  }
  return "";
}

void repair_slot_text(SlotSnapshot& s) {
  repair(s.error, AtomicText<29>::kCapacity);
  repair(s.checkpoint_path, AtomicText<12>::kCapacity);
  for (auto& g : s.gauges) repair(g.name, AtomicText<3>::kCapacity);
}

}  // namespace trainwatch::reporter
