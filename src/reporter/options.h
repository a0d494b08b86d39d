// Who this rank is: tw_options merged with the environment (RANK, LOCAL_RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT, TRAINWATCH_JOB, TRAINWATCH_DIR, TRAINWATCH_GROUP), checked.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <sys/types.h>

#include "core/result.h"
#include "trainwatch/trainwatch.h"

namespace trainwatch::reporter {

inline constexpr const char* kDefaultDir = "/dev/shm/trainwatch";
inline constexpr const char* kDefaultJob = "default";

struct RankOptions {
  std::string job = kDefaultJob;
  std::string dir = kDefaultDir;
  int32_t rank = 0;
  int32_t local_rank = 0;
  int32_t world_size = 1;
  std::string master_addr;
  int32_t master_port = 0;
  std::optional<gid_t> group;  // TRAINWATCH_GROUP: the group that may read the user's slots
};

// Reads one variable; nullopt when unset. Injected so tests need not touch the process env.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_env();

// Errors (code "environment" or "argument") carry one sentence naming the variable and value:
// "WORLD_SIZE='eight' is not a number".
Result<RankOptions> resolve_options(const tw_options* options, const EnvLookup& env);

// Strict decimal parse of a whole string into [min, max].
std::optional<int64_t> parse_int(const std::string& text, int64_t min, int64_t max);

}  // namespace trainwatch::reporter
