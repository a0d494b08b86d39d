// The shared-memory slot file: a header and kSlotCount fixed-size slots, one per local rank.
// Written by libtrainwatch in each rank, read by the agent in another process.
//
// Layout version 1 (all little-endian, x86-64/aarch64; every field is a lock-free atomic
// so two processes may touch it at once):
//   [0, 128)                      FileHeader
//   [128 + i*kSlotSize, +kSlotSize) Slot i (i = local rank)
//
// Ownership: Slot::owner packs (start time << 22 | pid) into one word so that a claim is one
// compare-and-swap; a slot whose owner is dead (pid gone, zombie, or pid reused by a process
// with another start time) may be claimed by the next process for that local rank.
//
// Seqlock (one writer per slot): the writer makes seq odd, stores fields, makes it even. A
// reader copies the fields between two loads of seq and retries when they differ or are odd.
//   writer: seq=s+1 (relaxed); fence(release); fields (relaxed); seq=s+2 (release)
//   reader: a=seq (acquire); fields (relaxed); fence(acquire); b=seq (relaxed); ok iff a==b, even
// Any change here that moves a field bumps kLayoutVersion; fields added in bytes that layout 1
// leaves unused keep it, with a rule for telling an older writer's slot apart: the launch
// identity (at the end of the slot, which it fills), the non-finite loss record (in the
// tail of checkpoint_path) and the activity record (in the tail of error, see there).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/enum_names.h"

namespace trainwatch::reporter {

inline constexpr uint64_t kMagic = 0x31544f4c53575454ull;  // "TTWSLOT1"
inline constexpr uint32_t kLayoutVersion = 1;
inline constexpr uint32_t kHeaderSize = 128;
inline constexpr uint32_t kSlotSize = 1024;
inline constexpr uint32_t kSlotCount = 64;  // local ranks per node; more is refused at open
inline constexpr size_t kFileSize = kHeaderSize + size_t{kSlotSize} * kSlotCount;
inline constexpr int kMaxGauges = 8;
inline constexpr int kPidBits = 22;  // Linux pid_max is at most 2^22

// Text stored as relaxed atomic words so a seqlocked copy is not a data race.
template <size_t Words>
struct AtomicText {
  std::atomic<uint64_t> words[Words];

  static constexpr size_t kCapacity = Words * 8 - 1;  // bytes, keeping one for NUL

  void store(std::string_view text) {
    uint64_t buf[Words] = {};
    size_t n = text.size() < kCapacity ? text.size() : kCapacity;
    // Cut before a character, never inside one: the agent refuses ill-formed UTF-8.
    if (n < text.size()) {
      while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0u) == 0x80u) --n;
    }
    std::memcpy(buf, text.data(), n);
    for (size_t i = 0; i < Words; ++i) words[i].store(buf[i], std::memory_order_relaxed);
  }
  std::string load() const {
    uint64_t buf[Words];
    for (size_t i = 0; i < Words; ++i) buf[i] = words[i].load(std::memory_order_relaxed);
    const char* chars = reinterpret_cast<const char*>(buf);
    return std::string(chars, strnlen(chars, Words * 8));
  }
};

struct FileHeader {
  std::atomic<uint64_t> magic;
  std::atomic<uint32_t> layout_version;
  std::atomic<uint32_t> header_size;
  std::atomic<uint32_t> slot_size;
  std::atomic<uint32_t> slot_count;
  AtomicText<8> job;
};
static_assert(sizeof(FileHeader) <= kHeaderSize);

struct GaugeCell {
  AtomicText<3> name;
  std::atomic<uint64_t> value_bits;
};

// What a rank says it is doing (tw_set_status): the slot's `status` holds the C header's
// TW_STATUS_* numbers, which these values equal (checked in slot_reader.cc).
enum class RankStatus : uint32_t {
  kInitializing = 0,
  kTraining = 1,
  kCheckpointing = 2,
  kEvaluating = 3,
  kFinished = 4,
  kFailed = 5,
};

// The words a rank's status is written as: the agent writes them in node reports and on
// its /health, the server reads them (jobs/report.cc) and the Python module's status()
// takes them (python/native/module.cc exports this table), all from this one table.
inline constexpr EnumNames<RankStatus, 6> kRankStatusNames{{{RankStatus::kInitializing, "initializing"},
                                                            {RankStatus::kTraining, "training"},
                                                            {RankStatus::kCheckpointing, "checkpointing"},
                                                            {RankStatus::kEvaluating, "evaluating"},
                                                            {RankStatus::kFinished, "finished"},
                                                            {RankStatus::kFailed, "failed"}}};
constexpr std::string_view to_string(RankStatus s) { return name_of(kRankStatusNames, s); }

enum class CheckpointState : uint32_t { kNone = 0, kInProgress = 1, kOk = 2, kFailed = 3 };

// The words a checkpoint state is written as in node reports: the agent writes them and
// the server reads them (jobs/report.cc), both from this one table. A value outside it
// (a newer writer's) reads as "none".
inline constexpr EnumNames<CheckpointState, 4> kCheckpointStateNames{
    {{CheckpointState::kNone, "none"},
     {CheckpointState::kInProgress, "in_progress"},
     {CheckpointState::kOk, "ok"},
     {CheckpointState::kFailed, "failed"}}};
constexpr std::string_view to_string(CheckpointState s) { return name_of(kCheckpointStateNames, s); }

struct Slot {
  // Outside the seqlock: claimed by CAS (see the file comment). 0 = never used.
  std::atomic<uint64_t> owner;
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> status;  // tw_run_status

  // Identity, written at open.
  std::atomic<int32_t> rank;
  std::atomic<int32_t> local_rank;
  std::atomic<int32_t> world_size;
  std::atomic<int32_t> master_port;
  std::atomic<int64_t> started_at_ms;  // wall clock at open
  std::atomic<int64_t> status_changed_ms;
  AtomicText<8> master_addr;

  // Per step.
  std::atomic<int64_t> step;
  std::atomic<uint64_t> step_reports;  // number of step calls: progress even if step repeats
  std::atomic<uint64_t> loss_bits;
  std::atomic<uint64_t> loss_scale_bits;
  std::atomic<uint64_t> grad_norm_bits;
  std::atomic<uint64_t> overflow_total;
  std::atomic<uint64_t> overflow_consecutive;
  std::atomic<uint64_t> samples;
  std::atomic<uint64_t> tokens;
  std::atomic<uint32_t> present;  // TW_FIELD_* bits ever reported, so "unknown" is not 0

  // ColossalAI.
  std::atomic<int32_t> pipeline_stage;
  std::atomic<uint64_t> gemini_oom_events;
  std::atomic<uint32_t> kernels_compiled;
  std::atomic<uint32_t> checkpoint_state;  // CheckpointState

  // Checkpoints.
  std::atomic<int64_t> checkpoint_step;
  std::atomic<int64_t> checkpoint_begin_ms;
  std::atomic<int64_t> checkpoint_end_ms;
  std::atomic<uint64_t> checkpoint_bytes;
  std::atomic<int64_t> last_ok_checkpoint_step;  // -1: none yet
  std::atomic<int64_t> last_ok_checkpoint_ms;
  // Layout 1 gave the path 16 words; this build writes it into the first 12 (95 bytes, cut
  // as before) and keeps the last 4 for the non-finite loss record below. An older agent
  // reads the 16 words as text and stops at the path's NUL, so it sees the path alone.
  AtomicText<12> checkpoint_path;

  // Non-finite losses, counted by the step calls (a step whose reported loss is NaN or
  // infinite). A run is a stretch of consecutive such steps; nonfinite_first_step is the
  // first step of the latest run, kept after the loss recovers until the next run begins,
  // so a single NaN leaves its count and step behind. No time is kept: the step path
  // reads no clock (trainwatch.h), so the agent stamps the run when it first sees it, as
  // it stamps steps. An older library writes its path across these words and never writes
  // the record, so it counts only while nonfinite_owner equals owner (as for the identity).
  std::atomic<uint64_t> nonfinite_owner;
  std::atomic<uint64_t> nonfinite_total;
  std::atomic<int64_t> nonfinite_first_step;     // -1: no non-finite loss yet
  std::atomic<uint64_t> nonfinite_first_report;  // step_reports at that step: tells runs apart

  // Last error. Layout 1 gave the text 32 words; this build writes it into the first 29
  // (231 bytes, cut as before, so byte 231 is always its NUL) and keeps the last 3 for the
  // activity record below. An older agent reads the 32 words as text and stops at that NUL.
  std::atomic<int64_t> error_ms;
  AtomicText<29> error;

  // What the rank is doing between steps (trainwatch.h: tw_collective_begin, tw_set_phase):
  // the collectives it entered, and the activity word (kActivity* below: the kind of the
  // collective it is in, or was in last, whether it is in it now, and the phase the job
  // declared). Each word is written alone, outside the seqlock, one store per call: a reader
  // may read it at any time. An older library writes its error text across these words and
  // never the record, so it counts only while activity_owner equals owner.
  std::atomic<uint64_t> activity_owner;
  std::atomic<uint64_t> collectives;
  std::atomic<uint64_t> activity;

  GaugeCell gauges[kMaxGauges];
  AtomicText<8> job;

  // Launch identity (launch_env.h), written at open. It sits in bytes that layout 1 left
  // unused at the end of the slot, so no field moved and the layout version stays 1: an older
  // agent never reads it, and an older library never writes it. Such a library reclaiming
  // the slot would leave the previous owner's identity behind, so these fields count only
  // while identity_owner equals owner (an older writer's slot reads as "no identity").
  std::atomic<uint64_t> identity_owner;
  std::atomic<int32_t> attempt;    // 0 for the first run; counts the launcher's restarts
  std::atomic<int32_t> node_rank;  // -1: no launcher said
  AtomicText<5> run_id;            // up to 39 bytes: a torchrun UUID fits whole
};
static_assert(sizeof(Slot) <= kSlotSize, "slot grew past its fixed size: bump the layout");
// The path and the non-finite record share what layout 1 gave the path alone: no field moved.
static_assert(sizeof(AtomicText<12>) + 4 * sizeof(uint64_t) == sizeof(AtomicText<16>));
// The error text and the activity record share what layout 1 gave the error alone.
static_assert(sizeof(AtomicText<29>) + 3 * sizeof(uint64_t) == sizeof(AtomicText<32>));

// The activity word: bits 0-7 the collective's kind (tw_collective), bit 8 set while the rank
// is inside it, bits 16-23 the declared phase (tw_phase).
inline constexpr uint64_t kActivityKindMask = 0xffu;
inline constexpr uint64_t kActivityInside = 1u << 8;
inline constexpr int kActivityPhaseShift = 16;
inline constexpr uint64_t kActivityPhaseMask = 0xffu;
static_assert(std::atomic<uint64_t>::is_always_lock_free);

inline uint64_t pack_owner(int32_t pid, uint64_t start_ticks) {
  return (start_ticks << kPidBits) | static_cast<uint64_t>(pid);
}
inline int32_t owner_pid(uint64_t owner) { return static_cast<int32_t>(owner & ((1u << kPidBits) - 1)); }
inline uint64_t owner_start_ticks(uint64_t owner) { return owner >> kPidBits; }

inline Slot* slot_at(void* base, uint32_t index) {
  return reinterpret_cast<Slot*>(static_cast<char*>(base) + kHeaderSize + size_t{index} * kSlotSize);
}
inline const Slot* slot_at(const void* base, uint32_t index) {
  return reinterpret_cast<const Slot*>(static_cast<const char*>(base) + kHeaderSize +
                                       size_t{index} * kSlotSize);
}

inline uint64_t double_bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
inline double bits_double(uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

}  // namespace trainwatch::reporter
