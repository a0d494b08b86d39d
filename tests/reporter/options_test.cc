#include "reporter/options.h"

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

TEST(ResolveOptions, DefaultsWithEmptyEnvironment) {
  auto r = resolve_options(nullptr, env_of({}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->job, "default");
  EXPECT_EQ(r->dir, "/dev/shm/trainwatch");
  EXPECT_EQ(r->rank, 0);
  EXPECT_EQ(r->world_size, 1);
}

TEST(ResolveOptions, TorchrunEnvironment) {
  auto r = resolve_options(nullptr, env_of({{"RANK", "5"},
                                            {"LOCAL_RANK", "1"},
                                            {"WORLD_SIZE", "8"},
                                            {"MASTER_ADDR", "10.0.0.1"},
                                            {"MASTER_PORT", "29500"},
                                            {"TRAINWATCH_JOB", "llama-7b"},
                                            {"TRAINWATCH_DIR", "/x"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rank, 5);
  EXPECT_EQ(r->local_rank, 1);
  EXPECT_EQ(r->world_size, 8);
  EXPECT_EQ(r->master_addr, "10.0.0.1");
  EXPECT_EQ(r->master_port, 29500);
  EXPECT_EQ(r->job, "llama-7b");
  EXPECT_EQ(r->dir, "/x");
}

TEST(ResolveOptions, LocalRankDefaultsToRank) {
  auto r = resolve_options(nullptr, env_of({{"RANK", "3"}, {"WORLD_SIZE", "4"}}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->local_rank, 3);
}

TEST(ResolveOptions, WorldSizeNotANumberNamesTheVariableAndValue) {
  auto r = resolve_options(nullptr, env_of({{"WORLD_SIZE", "eight"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "environment");
  EXPECT_NE(r.error().message.find("WORLD_SIZE='eight'"), std::string::npos) << r.error().message;
}

TEST(ResolveOptions, TrailingGarbageIsNotANumber) {
  EXPECT_FALSE(resolve_options(nullptr, env_of({{"RANK", "1x"}, {"WORLD_SIZE", "4"}})).ok());
  EXPECT_FALSE(resolve_options(nullptr, env_of({{"RANK", "-1"}, {"WORLD_SIZE", "4"}})).ok());
  EXPECT_FALSE(resolve_options(nullptr, env_of({{"WORLD_SIZE", "0"}})).ok());
}

TEST(ResolveOptions, RankAtOrAboveWorldSizeIsRefused) {
  auto r = resolve_options(nullptr, env_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "RANK 4 is not below WORLD_SIZE 4");
}

TEST(ResolveOptions, BadMasterPortAndJobName) {
  EXPECT_FALSE(resolve_options(nullptr, env_of({{"MASTER_PORT", "99999"}})).ok());
  EXPECT_FALSE(resolve_options(nullptr, env_of({{"TRAINWATCH_JOB", "../etc"}})).ok());
}

TEST(ResolveOptions, ExplicitArgumentsWinOverEnvironment) {
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "j";
  o.rank = 0;
  o.rank_set = 1;
  o.world_size = 2;
  o.world_size_set = 1;
  auto r = resolve_options(&o, env_of({{"RANK", "7"}, {"WORLD_SIZE", "nonsense"}, {"TRAINWATCH_JOB", "k"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rank, 0);
  EXPECT_EQ(r->world_size, 2);
  EXPECT_EQ(r->job, "j");
}

// srun without torchrun: no RANK anywhere, yet every task finds its own slot.
TEST(ResolveOptions, SlurmTasksFindTheirPlaceWithoutRank) {
  auto r = resolve_options(nullptr, env_of({{"SLURM_JOB_ID", "8812345"},
                                            {"SLURM_PROCID", "6"},
                                            {"SLURM_LOCALID", "2"},
                                            {"SLURM_NTASKS", "8"},
                                            {"SLURM_NODEID", "1"},
                                            {"SLURM_RESTART_COUNT", "1"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rank, 6);
  EXPECT_EQ(r->local_rank, 2);
  EXPECT_EQ(r->world_size, 8);
  EXPECT_EQ(r->launcher, "slurm");
  EXPECT_EQ(r->run_id, "8812345");
  EXPECT_EQ(r->attempt, 1);
  EXPECT_EQ(r->node_rank, 1);
  EXPECT_TRUE(r->warnings.empty());
}

// sbatch --job-name "Llama 7B" train.sh: the job takes Slurm's name unless TRAINWATCH_JOB
// or the argument names it.
TEST(ResolveOptions, SlurmNamesTheJobWhenNothingElseDoes) {
  auto named =
      resolve_options(nullptr, env_of({{"SLURM_JOB_ID", "8812345"}, {"SLURM_JOB_NAME", "Llama 7B"}}));
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->job, "llama-7b");
  auto overridden =
      resolve_options(nullptr, env_of({{"SLURM_JOB_NAME", "Llama 7B"}, {"TRAINWATCH_JOB", "pretrain"}}));
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ(overridden->job, "pretrain");
  auto unnamed = resolve_options(nullptr, env_of({{"SLURM_JOB_NAME", "..."}}));
  ASSERT_TRUE(unnamed.ok()) << "a name with nothing usable in it is no name, not an error";
  EXPECT_EQ(unnamed->job, kDefaultJob);
}

TEST(ResolveOptions, NoLauncherIsTheFirstAttemptOnAnUnknownNode) {
  auto r = resolve_options(nullptr, env_of({}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->attempt, 0);
  EXPECT_EQ(r->node_rank, -1);
  EXPECT_EQ(r->run_id, "");
}

TEST(ResolveOptions, BadSlurmRankNamesItsVariable) {
  auto r = resolve_options(nullptr, env_of({{"SLURM_PROCID", "first"}, {"SLURM_NTASKS", "2"}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "SLURM_PROCID='first' is not a number in range");
}

// The identity never costs a rank its reporting: a bad attempt is a warning and reads as 0.
TEST(ResolveOptions, BadIdentityNumberIsAWarningNotARefusal) {
  auto r = resolve_options(nullptr, env_of({{"TRAINWATCH_ATTEMPT", "second"}, {"GROUP_RANK", "-3"}}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->attempt, 0);
  EXPECT_EQ(r->node_rank, -1);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0], "TRAINWATCH_ATTEMPT='second' is not a number in range; ignored");
  EXPECT_EQ(r->warnings[1], "GROUP_RANK='-3' is not a number in range; ignored");
}

TEST(ResolveOptions, TooSmallStructIsRefused) {
  tw_options o{};
  o.struct_size = 4;
  EXPECT_EQ(resolve_options(&o, env_of({})).error().code, "argument");
}

}  // namespace
}  // namespace trainwatch::reporter
