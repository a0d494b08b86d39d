#include "reporter/options.h"

#include <cerrno>
#include <cstdlib>

#include "core/names.h"
#include "reporter/slot_dir.h"
#include "reporter/slot_file.h"
#include "reporter/slot_layout.h"

namespace trainwatch::reporter {

namespace {

// An int from the explicit option when set, else from the environment, else the fallback.
// `name` is the option's name in messages about an explicit value.
Result<int32_t> pick_int(bool set, int32_t explicit_value, const char* name, const EnvNumber& from_env,
                         int32_t fallback, int64_t min) {
  if (set) {
    if (explicit_value < min) {
      return make_error(
          "argument", std::string(name) + " argument " + std::to_string(explicit_value) + " is out of range");
    }
    return explicit_value;
  }
  if (!from_env.set()) return fallback;
  if (!from_env.value) {
    return make_error("environment", from_env.var + "='" + from_env.text + "' is not a number in range");
  }
  return static_cast<int32_t>(*from_env.value);
}

// The launcher's identity fields never refuse a rank: a value that is not a number becomes a
// warning and reads as unknown.
int32_t identity_int(const EnvNumber& from_env, int32_t unknown, std::vector<std::string>* warnings) {
  if (from_env.value) return static_cast<int32_t>(*from_env.value);
  if (from_env.set())
    warnings->push_back(from_env.var + "='" + from_env.text + "' is not a number in range; ignored");
  return unknown;
}

}  // namespace

Result<RankOptions> resolve_options(const tw_options* options, const EnvLookup& env) {
  tw_options none{};
  if (options == nullptr) {
    none.struct_size = sizeof none;
    options = &none;
  }
  if (options->struct_size < offsetof(tw_options, master_port) + sizeof(int32_t)) {
    return make_error("argument", "tw_options.struct_size " + std::to_string(options->struct_size) +
                                      " is smaller than version 1 of the struct");
  }
  RankOptions out;
  const LaunchEnv launch = read_launch_env(env);
  if (options->job && *options->job) {
    out.job = options->job;
  } else if (auto job = env("TRAINWATCH_JOB"); job && !job->empty()) {
    out.job = *job;
  } else if (!launch.job.empty()) {
    out.job = launch.job;
  }
  // The server's rule for job names, so a job the reporter accepts is one the server takes.
  if (std::string problem = name_problem(out.job); !problem.empty()) {
    return make_error("argument", "job name '" + out.job + "': " + problem);
  }
  if (options->dir && *options->dir) {
    out.dir = options->dir;
  } else if (auto dir = env("TRAINWATCH_DIR"); dir && !dir->empty()) {
    out.dir = *dir;
  }

  auto world = pick_int(options->world_size_set, options->world_size, "WORLD_SIZE", launch.world_size, 1, 1);
  if (!world) return world.error();
  auto rank = pick_int(options->rank_set, options->rank, "RANK", launch.rank, 0, 0);
  if (!rank) return rank.error();
  auto local =
      pick_int(options->local_rank_set, options->local_rank, "LOCAL_RANK", launch.local_rank, *rank, 0);
  if (!local) return local.error();
  out.world_size = *world;
  out.rank = *rank;
  out.local_rank = *local;
  if (out.rank >= out.world_size) {
    return make_error("environment", "RANK " + std::to_string(out.rank) + " is not below WORLD_SIZE " +
                                         std::to_string(out.world_size));
  }
  if (out.local_rank >= static_cast<int32_t>(kSlotCount)) {
    return make_error("environment", "LOCAL_RANK " + std::to_string(out.local_rank) + " is beyond the " +
                                         std::to_string(kSlotCount) + " slots of a node");
  }

  if (options->master_addr && *options->master_addr) {
    out.master_addr = options->master_addr;
  } else if (auto addr = env("MASTER_ADDR")) {
    out.master_addr = *addr;
  }
  if (options->master_port > 0) {
    out.master_port = options->master_port;
  } else if (auto port_text = env("MASTER_PORT"); port_text && !port_text->empty()) {
    auto port = parse_int(*port_text, 1, 65535);
    if (!port) return make_error("environment", "MASTER_PORT='" + *port_text + "' is not a port number");
    out.master_port = static_cast<int32_t>(*port);
  }
  if (auto group_text = env("TRAINWATCH_GROUP"); group_text && !group_text->empty()) {
    auto group = resolve_group(*group_text);
    if (!group) return group.error();
    out.group = *group;
  }
  out.launcher = launch.launcher;
  out.run_id = launch.run_id;
  out.attempt = identity_int(launch.attempt, 0, &out.warnings);
  out.node_rank = identity_int(launch.node_rank, -1, &out.warnings);
  out.node_name = launch.node_name;
  return out;
}

}  // namespace trainwatch::reporter
