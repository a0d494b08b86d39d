// Who this rank is: tw_options merged with the environment (the launcher's variables as
// launch_env.h reads them, MASTER_ADDR, MASTER_PORT, TRAINWATCH_JOB, TRAINWATCH_DIR,
// TRAINWATCH_GROUP), checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "core/result.h"
#include "reporter/launch_env.h"
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
  // From the launcher (launch_env.h); none of them can make opening fail.
  std::string launcher;
  std::string run_id;
  int32_t attempt = 0;
  int32_t node_rank = -1;             // -1: unknown
  std::string node_name;              // "": the host name
  std::vector<std::string> warnings;  // identity variables that were not numbers, one sentence each
};

// Errors (code "environment" or "argument") carry one sentence naming the variable and value:
// "WORLD_SIZE='eight' is not a number".
Result<RankOptions> resolve_options(const tw_options* options, const EnvLookup& env);

}  // namespace trainwatch::reporter
