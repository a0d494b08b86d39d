// Where this rank sits and which run it belongs to, as the launcher that started it says:
// torchrun, Slurm, Kubeflow's PyTorchJob and Trainer, JobSet, or trainwatch's own
// TRAINWATCH_* variables, which win over every launcher's. Pure: an environment lookup in,
// the chosen variable for each field out (docs/training.md, "Job identity from the
// launcher", has the table).
//
// For each field the first variable that is set wins, in this order:
//   rank        RANK (torchrun, PyTorchJob), SLURM_PROCID
//   local rank  LOCAL_RANK (torchrun), SLURM_LOCALID
//   world size  WORLD_SIZE (torchrun, PyTorchJob), SLURM_NTASKS
//   node rank   TRAINWATCH_NODE_RANK, GROUP_RANK (torchrun), SLURM_NODEID, PET_NODE_RANK (Kubeflow)
//   attempt     TRAINWATCH_ATTEMPT, TORCHELASTIC_RESTART_COUNT, SLURM_RESTART_COUNT,
//               JOBSET_RESTART_ATTEMPT (JobSet's restart-attempt annotation, by the downward API)
//   run id      TRAINWATCH_RUN_ID, TORCHELASTIC_RUN_ID (not its placeholder "none"), SLURM_JOB_ID
//   node name   TRAINWATCH_NODE, SLURMD_NODENAME
//   job name    SLURM_JOB_NAME (the name squeue shows), made a valid name (core/names.h):
//               lower case, '-' for any other character, at most 63; the reporter and the
//               agent use it when neither an argument nor TRAINWATCH_JOB names the job
// torchrun started by srun is the common nesting: torchrun's variables come first, so RANK
// (the global rank) wins over SLURM_PROCID (which there numbers the nodes).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace trainwatch::reporter {

// Reads one variable; nullopt when unset. Injected so tests need not touch the process env.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_env();

// One number from the environment, kept with the variable it came from so that whoever
// uses it can say "SLURM_PROCID='x' is not a number". A field given explicitly (an init()
// argument) is never parsed from here, so a bad variable it overrides is no error.
struct EnvNumber {
  std::string var;               // empty: no variable for this field is set
  std::string text;              // the variable's value as found
  std::optional<int64_t> value;  // nullopt: set, but not a whole number in the field's range

  bool set() const { return !var.empty(); }
};

struct LaunchEnv {
  std::string launcher;  // "torchrun", "slurm", "kubernetes", or "" when none is recognised
  EnvNumber rank, local_rank, world_size, node_rank, attempt;
  std::string run_id;     // "" when nothing names the run
  std::string node_name;  // "" when nothing names the node (the caller uses the host name)
  std::string job;        // "" when the launcher names no job (the caller uses "default")
};

// Ranges: ranks and node ranks [0, 2^24], world size [1, 2^24], attempt [0, 2^31 - 1].
LaunchEnv read_launch_env(const EnvLookup& env);

// `text` as a valid job name (core/names.h), or "" when nothing of it is left.
std::string job_name_from(std::string_view text);

// Strict decimal parse of a whole string into [min, max].
std::optional<int64_t> parse_int(const std::string& text, int64_t min, int64_t max);

}  // namespace trainwatch::reporter
