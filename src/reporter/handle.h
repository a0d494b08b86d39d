// The state behind a tw_handle: the mapped slot plus the writer's private copies of the
// counters, so a step report only stores (it never loads the shared words back).
// One writer per handle (see trainwatch.h).
#pragma once

#include <optional>

#include "reporter/slot_file.h"
#include "reporter/slot_layout.h"
#include "trainwatch/trainwatch.h"

struct tw_handle {
  std::optional<trainwatch::reporter::SlotFile> file;  // empty for the no-op handle
  trainwatch::reporter::Slot* slot = nullptr;          // null for the no-op handle
  int32_t pid = 0;   // the process that opened it: a forked child writes nothing (fork_guard.h)
  uint32_t seq = 0;  // last even value we published
  uint64_t step_reports = 0;
  uint64_t overflow_total = 0;
  uint64_t overflow_consecutive = 0;
  uint64_t samples = 0;
  uint64_t tokens = 0;
  uint64_t oom_events = 0;
  uint64_t nonfinite_total = 0;
  bool in_nonfinite_run = false;  // the last loss reported was NaN or infinite
  uint64_t collectives = 0;
  uint64_t activity = 0;  // the slot's activity word as last written (slot_layout.h)
  uint32_t present = 0;
  uint32_t status = TW_STATUS_INITIALIZING;
  uint32_t status_before_checkpoint = TW_STATUS_TRAINING;
};

namespace trainwatch::reporter {

// Seqlock write section; see slot_layout.h. Usage: { WriteSection w(h); ...stores... }
class WriteSection {
 public:
  explicit WriteSection(tw_handle* h) : h_(h) {
    h_->slot->seq.store(h_->seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
  }
  ~WriteSection() {
    h_->seq += 2;
    h_->slot->seq.store(h_->seq, std::memory_order_release);
  }
  WriteSection(const WriteSection&) = delete;
  WriteSection& operator=(const WriteSection&) = delete;

 private:
  tw_handle* h_;
};

}  // namespace trainwatch::reporter
