#include "reporter/launch_env.h"

#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "core/names.h"

namespace trainwatch::reporter {
namespace {

constexpr int64_t kMaxRank = int64_t{1} << 24;
constexpr int64_t kMaxAttempt = (int64_t{1} << 31) - 1;

// The first of `vars` that is set, parsed into [min, max].
EnvNumber first_number(const EnvLookup& env, std::initializer_list<const char*> vars, int64_t min,
                       int64_t max) {
  for (const char* var : vars) {
    if (auto text = env(var)) {
      return EnvNumber{var, *text, parse_int(*text, min, max)};
    }
  }
  return {};
}

// The first of `vars` that is set and not empty.
std::string first_text(const EnvLookup& env, std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    if (auto text = env(var); text && !text->empty()) return *text;
  }
  return {};
}

// torchrun's run id is its --rdzv-id, which is the word "none" when not given (and a fresh
// UUID under --standalone): "none" names no run.
EnvLookup without_torchrun_placeholder(const EnvLookup& env) {
  return [&env](const char* name) -> std::optional<std::string> {
    auto text = env(name);
    if (text && *text == "none" && std::string_view(name) == "TORCHELASTIC_RUN_ID") return std::nullopt;
    return text;
  };
}

bool any_set(const EnvLookup& env, std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    if (env(var)) return true;
  }
  return false;
}

}  // namespace

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::optional<int64_t> parse_int(const std::string& text, int64_t min, int64_t max) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t value = 0;
  size_t i = 0;
  bool negative = text[0] == '-';
  if (negative) i = 1;
  if (i == text.size()) return std::nullopt;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  if (negative) value = -value;
  if (value < min || value > max) return std::nullopt;
  return value;
}

LaunchEnv read_launch_env(const EnvLookup& env) {
  LaunchEnv out;
  if (any_set(env, {"TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "GROUP_RANK"})) {
    out.launcher = "torchrun";
  } else if (any_set(env, {"SLURM_JOB_ID", "SLURM_PROCID"})) {
    out.launcher = "slurm";
  } else if (any_set(env, {"KUBERNETES_SERVICE_HOST"})) {
    out.launcher = "kubernetes";
  }
  out.rank = first_number(env, {"RANK", "SLURM_PROCID"}, 0, kMaxRank);
  out.local_rank = first_number(env, {"LOCAL_RANK", "SLURM_LOCALID"}, 0, kMaxRank);
  out.world_size = first_number(env, {"WORLD_SIZE", "SLURM_NTASKS"}, 1, kMaxRank);
  out.node_rank =
      first_number(env, {"TRAINWATCH_NODE_RANK", "GROUP_RANK", "SLURM_NODEID", "PET_NODE_RANK"}, 0, kMaxRank);
  out.attempt = first_number(
      env,
      {"TRAINWATCH_ATTEMPT", "TORCHELASTIC_RESTART_COUNT", "SLURM_RESTART_COUNT", "JOBSET_RESTART_ATTEMPT"},
      0, kMaxAttempt);
  out.run_id = first_text(without_torchrun_placeholder(env),
                          {"TRAINWATCH_RUN_ID", "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"});
  out.node_name = first_text(env, {"TRAINWATCH_NODE", "SLURMD_NODENAME"});
  out.job = job_name_from(first_text(env, {"SLURM_JOB_NAME"}));
  return out;
}

std::string job_name_from(std::string_view text) {
  std::string name;
  for (char c : text) {
    if (name.size() == kMaxNameLength) break;
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (name.empty() && (c == '.' || !allowed)) continue;  // "." and ".." name directories
    name += allowed ? c : '-';
  }
  return valid_name(name) ? name : std::string();
}

}  // namespace trainwatch::reporter
