/* libtrainwatch: a training rank reports its progress to the node's trainwatch agent.
 *
 * Each rank owns one fixed-size slot in a shared-memory file
 * (TRAINWATCH_DIR/<uid>/<job>.slots, default /dev/shm/trainwatch; mode 0600, in a 0700
 * directory of the user's own). Reports are stores into that
 * slot under a seqlock; the agent reads them from another process.
 *
 * Contract:
 * - Every call returns a tw_status and writes outputs through pointers. No call throws,
 *   aborts, or blocks the caller on a lock.
 * - tw_step, tw_step_ex, tw_collective_begin/end and tw_set_phase are a handful of atomic
 *   stores: no syscall, no allocation, no lock.
 *   Status, checkpoint and error calls are rare and may read the clock.
 * - tw_open always stores a usable handle in *out, even when it fails: on failure that
 *   handle is a no-op, one line explaining why goes to stderr, and training goes on.
 * - A handle reports for the process that opened it. In a child made by fork() (a data
 *   loader worker, a helper) every call on an inherited handle is a no-op that returns
 *   TW_ERR_DISABLED, so the child never writes its parent's slot; a child that wants its
 *   own reports opens its own handle.
 * - Threading: a handle has one writer. Calls on one handle from several threads at once
 *   must be serialised by the caller (the Python module's GIL does this).
 * - Structs passed in carry their size in struct_size (set it to sizeof); fields added
 *   later go at the end, and the library reads only what the caller's size covers.
 */
#ifndef TRAINWATCH_TRAINWATCH_H_
#define TRAINWATCH_TRAINWATCH_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TW_ABI_VERSION 1

typedef enum tw_status {
  TW_OK = 0,
  TW_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad struct_size, an unknown enum value */
  TW_ERR_ENVIRONMENT = 2,      /* RANK/WORLD_SIZE/... missing or not numbers, rank >= world size */
  TW_ERR_IO = 3,               /* the slot directory or file cannot be created or mapped */
  TW_ERR_VERSION = 4,          /* the slot file was written by an incompatible layout version */
  TW_ERR_CLAIMED = 5,          /* a live process already owns this rank's slot */
  TW_ERR_DISABLED = 6,         /* the handle is a no-op (tw_open failed earlier) */
} tw_status;

typedef enum tw_run_status {
  TW_STATUS_INITIALIZING = 0,
  TW_STATUS_TRAINING = 1,
  TW_STATUS_CHECKPOINTING = 2,
  TW_STATUS_EVALUATING = 3,
  TW_STATUS_FINISHED = 4,
  TW_STATUS_FAILED = 5,
} tw_run_status;

typedef struct tw_handle tw_handle;

/* Which rank this process is. Zero/NULL fields are taken from the environment:
 * job TRAINWATCH_JOB (default "default"), dir TRAINWATCH_DIR, rank RANK or SLURM_PROCID,
 * local rank LOCAL_RANK or SLURM_LOCALID (default: rank), world size WORLD_SIZE or
 * SLURM_NTASKS (default 1), MASTER_ADDR, MASTER_PORT. The run id, restart attempt and node
 * rank always come from the launcher's variables (torchrun, Slurm, TRAINWATCH_RUN_ID,
 * TRAINWATCH_ATTEMPT, TRAINWATCH_NODE_RANK; docs/training.md) and go into the slot.
 * Set the *_set flags to use an explicit 0 for a number. */
typedef struct tw_options {
  uint32_t struct_size; /* sizeof(tw_options) */
  const char* job;
  const char* dir;
  int32_t rank;
  int32_t local_rank;
  int32_t world_size;
  uint8_t rank_set;
  uint8_t local_rank_set;
  uint8_t world_size_set;
  uint8_t reserved0;
  const char* master_addr;
  int32_t master_port; /* 0: from MASTER_PORT */
} tw_options;

/* Opens (or reuses, when its owner is dead) this rank's slot. Always sets *out (unless out
 * is NULL): a working handle with TW_OK, a no-op handle otherwise. */
tw_status tw_open(const tw_options* options, tw_handle** out);

/* Releases the handle. The slot keeps its last contents for the agent and is reused once
 * this process is gone. Closing the no-op handle is allowed and does nothing. */
tw_status tw_close(tw_handle* handle);

/* Whether the handle reports (1) or is a no-op (0). */
int tw_is_enabled(const tw_handle* handle);

/* Why the last tw_open failed, as the line printed to stderr ("" after success). */
const char* tw_last_error(void);

tw_status tw_set_status(tw_handle* handle, tw_run_status status);

/* The per-step fast path: step number and loss. */
tw_status tw_step(tw_handle* handle, int64_t step, double loss);

enum {
  TW_FIELD_LOSS = 1u << 0,
  TW_FIELD_LOSS_SCALE = 1u << 1,
  TW_FIELD_OVERFLOW = 1u << 2,
  TW_FIELD_GRAD_NORM = 1u << 3,
  TW_FIELD_SAMPLES = 1u << 4,
  TW_FIELD_TOKENS = 1u << 5,
};

typedef struct tw_step_info {
  uint32_t struct_size; /* sizeof(tw_step_info) */
  uint32_t fields;      /* TW_FIELD_* bits: which of the values below are given */
  int64_t step;
  double loss;
  double loss_scale;
  double grad_norm;
  uint8_t overflow; /* this step overflowed (fp16): counts total and consecutive */
  uint8_t reserved[7];
  uint64_t samples; /* processed in this step; added to the running total */
  uint64_t tokens;  /* processed in this step; added to the running total */
} tw_step_info;

tw_status tw_step_ex(tw_handle* handle, const tw_step_info* info);

/* Checkpoint begin sets status checkpointing; end sets it back to what it was and records
 * the outcome. path may be NULL; long paths are truncated. */
tw_status tw_checkpoint_begin(tw_handle* handle, int64_t step, const char* path);
tw_status tw_checkpoint_end(tw_handle* handle, int ok, uint64_t bytes);

/* Records an error message (truncated to the slot's size). Does not change the status. */
tw_status tw_error(tw_handle* handle, const char* message);

/* A named gauge (up to TW_MAX_GAUGES names per rank; names are truncated to 23 bytes).
 * TW_ERR_INVALID_ARGUMENT when all gauge places are taken by other names. */
#define TW_MAX_GAUGES 8
tw_status tw_gauge(tw_handle* handle, const char* name, double value);

/* Collectives: a rank marks the collectives it enters and leaves (the Python module wraps
 * torch.distributed's for it), so that the agent sees which rank the others wait for, how
 * long each waits a step, and, when a job stalls, which collective each rank is in and the
 * how-manieth. Both calls are per-step path: one or two atomic stores, no syscall, no
 * allocation, no lock. An unknown kind is kept as TW_COLLECTIVE_OTHER. */
typedef enum tw_collective {
  TW_COLLECTIVE_OTHER = 0,
  TW_COLLECTIVE_ALL_REDUCE = 1,
  TW_COLLECTIVE_BROADCAST = 2,
  TW_COLLECTIVE_BARRIER = 3,
  TW_COLLECTIVE_ALL_GATHER = 4,
  TW_COLLECTIVE_REDUCE_SCATTER = 5,
  TW_COLLECTIVE_REDUCE = 6,
  TW_COLLECTIVE_GATHER = 7,
  TW_COLLECTIVE_SCATTER = 8,
  TW_COLLECTIVE_ALL_TO_ALL = 9,
  TW_COLLECTIVE_SEND = 10,
  TW_COLLECTIVE_RECV = 11,
} tw_collective;
tw_status tw_collective_begin(tw_handle* handle, tw_collective kind);
tw_status tw_collective_end(tw_handle* handle);

/* The phase the job is in: training (the default), evaluation, or a warm-up. Steps made in
 * evaluation or warm-up are never a straggler or a throughput drop, and the pause evaluation
 * makes is not a hang (within what the job has shown before). One atomic store. */
typedef enum tw_phase { TW_PHASE_TRAIN = 0, TW_PHASE_EVAL = 1, TW_PHASE_WARMUP = 2 } tw_phase;
tw_status tw_set_phase(tw_handle* handle, tw_phase phase);

/* ColossalAI's fields: pipeline stage (-1 for none), Gemini OOM events (added),
 * JIT kernels compiled (a rank still compiling is not yet healthy). */
tw_status tw_set_pipeline_stage(tw_handle* handle, int32_t stage);
tw_status tw_add_oom_events(tw_handle* handle, uint64_t count);
tw_status tw_set_kernels_compiled(tw_handle* handle, int compiled);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRAINWATCH_TRAINWATCH_H_ */
