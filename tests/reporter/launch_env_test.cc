// Which variable gives each field, for every launcher we read and for their usual nestings.
#include "reporter/launch_env.h"

#include <gtest/gtest.h>

#include <map>

namespace trainwatch::reporter {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The value a field resolved to, or -1 when no variable gave a number.
int64_t value_of(const EnvNumber& n) { return n.value.value_or(-1); }

TEST(LaunchEnv, NothingSetNamesNoLauncherAndNoField) {
  LaunchEnv e = read_launch_env(env_of({}));
  EXPECT_EQ(e.launcher, "");
  EXPECT_FALSE(e.rank.set());
  EXPECT_FALSE(e.attempt.set());
  EXPECT_FALSE(e.node_rank.set());
  EXPECT_EQ(e.run_id, "");
  EXPECT_EQ(e.node_name, "");
  EXPECT_EQ(e.job, "");
}

TEST(LaunchEnv, SlurmsJobNameIsMadeAValidName) {
  EXPECT_EQ(read_launch_env(env_of({{"SLURM_JOB_NAME", "train.sh"}})).job, "train.sh");
  EXPECT_EQ(job_name_from("Llama 7B/ft#2"), "llama-7b-ft-2");
  EXPECT_EQ(job_name_from("..hidden"), "hidden") << "a leading '.' would name a directory";
  EXPECT_EQ(job_name_from(std::string(100, 'a')), std::string(63, 'a'));
  EXPECT_EQ(job_name_from("\xe2\x9c\x93 run"), "run");
  EXPECT_EQ(job_name_from(""), "");
  EXPECT_EQ(job_name_from("!!!"), "");
}

// What torchrun 1.13 puts in each worker's environment on the second node after one restart.
TEST(LaunchEnv, Torchrun) {
  LaunchEnv e = read_launch_env(env_of({{"RANK", "9"},
                                        {"LOCAL_RANK", "1"},
                                        {"WORLD_SIZE", "16"},
                                        {"GROUP_RANK", "1"},
                                        {"TORCHELASTIC_RUN_ID", "llama-run-7"},
                                        {"TORCHELASTIC_RESTART_COUNT", "1"},
                                        {"MASTER_ADDR", "10.0.0.1"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(value_of(e.rank), 9);
  EXPECT_EQ(value_of(e.local_rank), 1);
  EXPECT_EQ(value_of(e.world_size), 16);
  EXPECT_EQ(value_of(e.node_rank), 1);
  EXPECT_EQ(e.node_rank.var, "GROUP_RANK");
  EXPECT_EQ(value_of(e.attempt), 1);
  EXPECT_EQ(e.run_id, "llama-run-7");
}

TEST(LaunchEnv, TorchrunWithoutRdzvIdNamesNoRun) {
  LaunchEnv e =
      read_launch_env(env_of({{"TORCHELASTIC_RUN_ID", "none"}, {"TORCHELASTIC_RESTART_COUNT", "0"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.run_id, "");
  EXPECT_EQ(value_of(e.attempt), 0);
}

// srun --ntasks 8 over two nodes, one process per task: the fourth task of the second node.
TEST(LaunchEnv, SlurmTasks) {
  LaunchEnv e = read_launch_env(env_of({{"SLURM_JOB_ID", "8812345"},
                                        {"SLURM_PROCID", "7"},
                                        {"SLURM_LOCALID", "3"},
                                        {"SLURM_NTASKS", "8"},
                                        {"SLURM_NODEID", "1"},
                                        {"SLURMD_NODENAME", "gpu-b07"},
                                        {"SLURM_RESTART_COUNT", "2"}}));
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(value_of(e.rank), 7);
  EXPECT_EQ(e.rank.var, "SLURM_PROCID");
  EXPECT_EQ(value_of(e.local_rank), 3);
  EXPECT_EQ(value_of(e.world_size), 8);
  EXPECT_EQ(value_of(e.node_rank), 1);
  EXPECT_EQ(value_of(e.attempt), 2);
  EXPECT_EQ(e.run_id, "8812345");
  EXPECT_EQ(e.node_name, "gpu-b07");
}

// srun starts one torchrun per node; torchrun's workers see both: torchrun's numbers win
// for the rank place (SLURM_PROCID is the node's task, not the rank), Slurm still names the node.
TEST(LaunchEnv, TorchrunInsideSlurm) {
  LaunchEnv e = read_launch_env(env_of({{"SLURM_JOB_ID", "8812345"},
                                        {"SLURM_PROCID", "1"},
                                        {"SLURM_LOCALID", "0"},
                                        {"SLURM_NTASKS", "2"},
                                        {"SLURM_NODEID", "1"},
                                        {"SLURMD_NODENAME", "gpu-b07"},
                                        {"SLURM_RESTART_COUNT", "3"},
                                        {"RANK", "13"},
                                        {"LOCAL_RANK", "5"},
                                        {"WORLD_SIZE", "16"},
                                        {"GROUP_RANK", "1"},
                                        {"TORCHELASTIC_RUN_ID", "none"},
                                        {"TORCHELASTIC_RESTART_COUNT", "0"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(value_of(e.rank), 13);
  EXPECT_EQ(value_of(e.local_rank), 5);
  EXPECT_EQ(value_of(e.world_size), 16);
  EXPECT_EQ(e.attempt.var, "TORCHELASTIC_RESTART_COUNT");
  EXPECT_EQ(value_of(e.attempt), 0);
  EXPECT_EQ(e.run_id, "8812345") << "torchrun named no run, so Slurm's job id does";
  EXPECT_EQ(e.node_name, "gpu-b07");
}

// Kubeflow's PyTorchJob: RANK, WORLD_SIZE, MASTER_ADDR per pod; its elastic and Trainer
// runtimes add PET_NODE_RANK for torchrun. Every pod sees KUBERNETES_SERVICE_HOST.
TEST(LaunchEnv, KubeflowPyTorchJob) {
  LaunchEnv e = read_launch_env(env_of({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                        {"MASTER_ADDR", "llama-master-0"},
                                        {"RANK", "3"},
                                        {"WORLD_SIZE", "4"},
                                        {"PET_NODE_RANK", "3"}}));
  EXPECT_EQ(e.launcher, "kubernetes");
  EXPECT_EQ(value_of(e.rank), 3);
  EXPECT_EQ(value_of(e.world_size), 4);
  EXPECT_EQ(value_of(e.node_rank), 3);
  EXPECT_FALSE(e.attempt.set());
}

// JobSet records its restarts in an annotation; the pod template maps it to
// JOBSET_RESTART_ATTEMPT with the downward API.
TEST(LaunchEnv, JobSetRestartAttempt) {
  LaunchEnv e =
      read_launch_env(env_of({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"JOBSET_RESTART_ATTEMPT", "4"}}));
  EXPECT_EQ(value_of(e.attempt), 4);
}

TEST(LaunchEnv, TrainwatchVariablesWinOverEveryLauncher) {
  LaunchEnv e = read_launch_env(env_of({{"SLURM_JOB_ID", "8812345"},
                                        {"SLURM_NODEID", "1"},
                                        {"SLURMD_NODENAME", "gpu-b07"},
                                        {"SLURM_RESTART_COUNT", "2"},
                                        {"GROUP_RANK", "1"},
                                        {"TORCHELASTIC_RUN_ID", "elastic-1"},
                                        {"TORCHELASTIC_RESTART_COUNT", "1"},
                                        {"TRAINWATCH_RUN_ID", "llama-7b-v3"},
                                        {"TRAINWATCH_ATTEMPT", "5"},
                                        {"TRAINWATCH_NODE_RANK", "6"},
                                        {"TRAINWATCH_NODE", "rack2-node6"}}));
  EXPECT_EQ(e.run_id, "llama-7b-v3");
  EXPECT_EQ(value_of(e.attempt), 5);
  EXPECT_EQ(value_of(e.node_rank), 6);
  EXPECT_EQ(e.node_name, "rack2-node6");
}

TEST(LaunchEnv, EmptyTextNamesNothingButAnEmptyNumberIsNoNumber) {
  LaunchEnv e = read_launch_env(
      env_of({{"TRAINWATCH_RUN_ID", ""}, {"SLURM_JOB_ID", "42"}, {"SLURM_RESTART_COUNT", ""}}));
  EXPECT_EQ(e.run_id, "42");
  EXPECT_TRUE(e.attempt.set());
  EXPECT_FALSE(e.attempt.value);
}

TEST(LaunchEnv, NumbersOutsideTheirRangeAreNoNumbers) {
  LaunchEnv e =
      read_launch_env(env_of({{"WORLD_SIZE", "0"}, {"TRAINWATCH_ATTEMPT", "-1"}, {"GROUP_RANK", "x"}}));
  EXPECT_FALSE(e.world_size.value);
  EXPECT_EQ(e.world_size.text, "0");
  EXPECT_FALSE(e.attempt.value);
  EXPECT_FALSE(e.node_rank.value);
  EXPECT_EQ(e.node_rank.var, "GROUP_RANK");
}

}  // namespace
}  // namespace trainwatch::reporter
