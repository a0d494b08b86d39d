// A node report: what one node's agent pushes to POST /api/v1/jobs/{job}/report every
// report_every (docs/api.md, "Node reports"). Schema version 1.
//
// Times inside a report are ages ("this happened N ms before the report was sent"), never
// timestamps of the node's clock: the server adds them to its own receive time, so nodes
// whose clocks disagree are still compared on one clock (docs/failure-modes.md: liveness uses the
// server's receive time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/native_stack.h"
#include "core/process_exit.h"
#include "core/python_stack.h"
#include "core/result.h"
#include "jobs/gpu_report.h"
#include "reporter/slot_layout.h"

namespace trainwatch::jobs {

inline constexpr int kReportSchemaVersion = 1;
// Bounds of one report. Bigger bodies answer 413; longer lists answer 400 saying which.
inline constexpr size_t kMaxReportBytes = 512 * 1024;
inline constexpr size_t kMaxRanksPerReport = 1024;
inline constexpr size_t kMaxGpusPerReport = 64;
inline constexpr size_t kMaxDisksPerReport = 16;
// The agent's notes (one per invalid slot or removed slot: at most 2 x 256 user folders x
// 64 slots); those of codes this server does not read are skipped.
inline constexpr size_t kMaxNotesPerReport = 32'768;
inline constexpr size_t kMaxTextBytes = 1024;  // node names, errors, paths: longer is cut
// Ages and durations (every *_age_ms, duration_ms, max_step_gap_ms) are clamped into
// [0, kMaxAgeMs] and steps (every *step) into [-1, kMaxStep] on parse, never refused: a
// year is older than any training run, and with both bounds every sum and difference the
// server forms from them (now - age, 5 x a gap, step lag) stays far inside int64
// nanoseconds.
inline constexpr int64_t kMaxAgeMs = 366LL * 24 * 3'600'000;
inline constexpr int64_t kMaxStep = int64_t{1} << 53;  // also exact as a double in /metrics

using reporter::RankStatus;  // its words: reporter::kRankStatusNames

// The phase a rank's job declared through the library (tw_set_phase): evaluation
// and warm-up are off the job's pace, and say so before their steps look slow.
enum class DeclaredPhase { kTrain, kEval, kWarmup };
DeclaredPhase declared_phase(std::string_view word);
std::string_view to_string(DeclaredPhase phase);

// The agent reads it from the rank's slot and writes it in the report by the slot's names.
using reporter::CheckpointState;
using reporter::to_string;

struct CheckpointReport {
  CheckpointState state = CheckpointState::kNone;
  int64_t step = -1;
  std::optional<int64_t> begin_age_ms;  // since the current or last checkpoint began
  std::optional<int64_t> duration_ms;   // of the last one that ended
  int64_t last_ok_step = -1;
  std::optional<int64_t> last_ok_age_ms;  // since the last good checkpoint ended
};

struct RankStack {
  PyStack stack;            // no threads when only a note came
  std::string note;         // why there is no stack ("" when there is one)
  int64_t age_ms = 0;       // since the capture
  NativeStack native;       // eu-stack's frames (agent/native_capture.h); no threads when none came
  std::string native_note;  // why none came, or what went wrong while they were taken
  // Its DataLoader workers' stacks, taken with its own (agent/child_stacks.h): at most
  // kMaxChildStacks, each its main thread's innermost frames; empty from older agents.
  std::vector<ChildPyStack> children;
};

struct CollectiveReport {
  uint64_t count = 0;   // collectives entered
  std::string kind;     // "all_reduce", "broadcast", "barrier"...: the current or last one
  bool inside = false;  // in it now
  int64_t wait_ms = 0;  // sampled time in a collective, since the agent first saw the rank
  int64_t sampled_ms = 0;
};

// A rank evaluating, as its status or its declared phase says: it makes no steps on purpose.
struct RankReport;
bool evaluating(const RankReport& r);
// Steps that say nothing of the job's pace: evaluation, a declared warm-up.
bool off_pace(const RankReport& r);

struct RankReport {
  int rank = -1;
  int local_rank = -1;
  int world_size = 0;
  int64_t pid = 0;
  bool alive = true;
  char state = '?';  // /proc state letter: R S D T t Z; '?' when gone
  RankStatus status = RankStatus::kInitializing;
  int64_t step = -1;                                  // -1: no step yet
  uint64_t step_reports = 0;                          // step calls so far: progress even when step repeats
  std::optional<int64_t> last_step_age_ms;            // since the agent saw the current step
  int64_t max_step_gap_ms = 0;                        // longest time between steps seen since the last report
  std::optional<int64_t> gone_age_ms;                 // since the agent first saw the process gone
  std::optional<double> cpu_s;                        // the process's user + system CPU time
  std::optional<double> loss, loss_scale, grad_norm;  // may be NaN or infinite
  uint64_t overflow_total = 0, overflow_consecutive = 0, samples = 0, tokens = 0;
  CheckpointReport checkpoint;
  std::string error;
  std::optional<int64_t> error_age_ms;
  // The launcher's identity (optional in schema 1; absent from older agents and libraries):
  // the restart attempt (0 = first run), the launcher's run id, the node's index in the job.
  std::optional<int> attempt;
  std::string run_id;
  std::optional<int> node_rank;
  // Non-finite losses (optional in schema 1; absent from older agents and libraries): how
  // many steps reported a NaN or infinite loss, and the first step of the latest run of
  // them (the run goes on while `loss` is non-finite) with its age, as its agent saw it.
  std::optional<uint64_t> nonfinite_total;
  std::optional<int64_t> nonfinite_first_step;
  std::optional<int64_t> nonfinite_first_age_ms;
  // The steps in a row of that run, up to the last one seen (optional in schema 1; 0 once
  // the loss is finite again): one NaN is a finding, a streak of them a page (analysis.h).
  std::optional<uint64_t> nonfinite_run;
  // The phase the job declared (the report's "phase": absent or "train", "eval", "warmup";
  // a word this server does not know reads as training), and the
  // collectives the rank marks (optional in schema 1; absent from older agents and
  // libraries, and for a rank that marks none): how many it entered, the kind of the one it
  // is in (or was in last), whether it is in it now, and, over the agent's samples, the time
  // it was seen in one against the time sampled (cumulative: windows subtract).
  DeclaredPhase phase = DeclaredPhase::kTrain;
  std::optional<CollectiveReport> collective;
  // Its resident memory at the agent's last sample while it lived (optional in schema 1).
  std::optional<uint64_t> rss_bytes;
  // Where its main thread waits (the agent's reading of /proc; "" when unknown), and its
  // Python stack when the agent asked for one because its step was overdue.
  std::string syscall, wchan;
  std::optional<RankStack> stack;
  // Once the process is gone, how it ended, when the agent could tell (agent/exit_watch.h).
  std::optional<ProcessExit> exit;
  std::optional<RankGpuReport> gpu;  // the GPU it uses; absent when its agent could not tell
};

struct DiskReport {
  std::string name, path;
  bool ok = false;
  std::string error;
  uint64_t free_bytes = 0, total_bytes = 0;
};

struct RendezvousReport {
  std::string host;
  int port = 0;
  bool listening = false;
  std::string error;
};

// A rank the agent can no longer see: its slot folder or file went while its process runs
// (the note `slot_removed`, agent/removed_slots.h). At most kMaxRanksPerReport are kept.
struct RemovedSlotNote {
  int rank = 0;
  int64_t pid = 0;
  std::string path;
};

struct NodeReport {
  int schema = kReportSchemaVersion;
  std::string job;  // may be empty: the URL names the job
  std::string node;
  int64_t agent_pid = 0;
  uint64_t seq = 0;    // the agent's report counter
  bool final = false;  // the agent's last report: its host is exiting
  Millis report_every{5'000};
  std::vector<RankReport> ranks;
  std::vector<GpuReport> gpus;
  std::vector<IbPortReport> ib_ports;  // InfiniBand/RoCE ports (optional in schema 1)
  std::vector<DiskReport> disks;
  std::optional<uint64_t> memory_available_bytes, memory_total_bytes;
  std::optional<RendezvousReport> rendezvous;
  std::vector<RemovedSlotNote> slots_removed;
};

// Parses and validates a report body. Errors ("report.json", "report.schema",
// "report.invalid") carry one sentence naming the field: "ranks[2].step: expected an
// integer, found a string".
Result<NodeReport> parse_node_report(std::string_view body);

}  // namespace trainwatch::jobs
