// `trainwatch agent --job NAME --listen 127.0.0.1:8765`: the node sidecar. Serves /health
// and /metrics for every local rank of the job until SIGINT/SIGTERM.
//
// The same options make the `trainwatch-agent` program (agent_main.cc), which links only
// the agent: `trainwatch agent` runs it in its place when it lies beside this binary, so
// the sidecar maps none of the server's libraries (a third of its memory otherwise).
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/agent.h"
#include "cli/commands.h"
#include "cli/fd_limit.h"
#include "cli/listen_address.h"
#include "reporter/launch_env.h"
#include "reporter/options.h"

namespace trainwatch::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

// The command line as given; agent_options() turns it into the agent's options.
struct AgentArgs {
  agent::AgentOptions o;
  std::string listen = "127.0.0.1:8765";
  std::string checkpoint_dir, nvme_path;
  bool no_native_stacks = false;
  double stall_after_s = 600, disk_free_gb = 10, host_memory_free_gb = 1, report_every_s = 5;
};

void add_flags(CLI::App& sub, AgentArgs& args) {
  args.o.job.clear();  // not given: the launcher's name or the default (agent_options())
  // The ranks' own variables: an agent started beside them in the same environment
  // watches what they write without repeating it.
  sub.add_option("--job", args.o.job,
                 "Job name (default, as the ranks read it: TRAINWATCH_JOB, else Slurm's SLURM_JOB_NAME, "
                 "else 'default')")
      ->envname("TRAINWATCH_JOB");
  sub.add_option("--listen", args.listen, "host:port to serve on");
  sub.add_option("--dir", args.o.dir, "Slot directory (default: TRAINWATCH_DIR, as the ranks read it)")
      ->envname("TRAINWATCH_DIR");
  sub.add_option("--checkpoint-dir", args.checkpoint_dir, "Watch free space here");
  sub.add_option("--nvme-path", args.nvme_path, "Watch free space here (ZeRO-Infinity offload)");
  sub.add_option("--nvml-library", args.o.nvml_library,
                 "Path of libnvidia-ml.so.1 (or TRAINWATCH_NVML_LIBRARY)");
  sub.add_option("--sysfs-root", args.o.sysfs_root,
                 "Where sysfs is mounted; InfiniBand/RoCE ports are read from <root>/class/infiniband "
                 "(or TRAINWATCH_SYSFS_ROOT)");
  sub.add_flag(
      "--no-native-stacks", args.no_native_stacks,
      "Do not run eu-stack for a rank whose step is overdue (native frames beside its Python stack)");
  sub.add_option("--stall-after", args.stall_after_s, "Seconds without a step before 'stalled'");
  sub.add_option("--gpu-memory-pct", args.o.thresholds.gpu_memory_pct, "GPU memory % that is an OOM risk");
  sub.add_option("--disk-free-gb", args.disk_free_gb, "Minimum free GB on watched paths");
  sub.add_option("--host-memory-free-gb", args.host_memory_free_gb, "Minimum available host memory, GB");
  sub.add_option("--server", args.o.server_url,
                 "Push node reports to this trainwatch server, http(s)://HOST:PORT (or TRAINWATCH_SERVER); "
                 "the token comes from TRAINWATCH_TOKEN");
  sub.add_option("--node", args.o.node,
                 "This node's name in reports (or TRAINWATCH_NODE; default: the host name)");
  sub.add_option("--report-every", args.report_every_s, "Seconds between node reports")
      ->check(CLI::Range(0.1, 3600.0));
}

// The agent's options from the command line and the environment; false: --listen is bad
// (said on stderr).
bool agent_options(const AgentArgs& args, agent::AgentOptions& o) {
  o = args.o;
  auto listen = parse_listen_address(args.listen);
  if (!listen) {
    std::fprintf(stderr, "trainwatch agent: --listen %s\n", listen.error().message.c_str());
    return false;
  }
  o.host = listen->host;
  o.port = listen->port;
  if (o.job.empty()) {
    o.job = reporter::read_launch_env(reporter::process_env()).job;
    if (o.job.empty()) o.job = reporter::kDefaultJob;
  }
  const FdLimit fd_limit = raise_fd_limit();
  std::fprintf(stderr, "trainwatch agent: %s\n", describe(fd_limit).c_str());
  if (!args.checkpoint_dir.empty()) o.disks.push_back({"checkpoint_dir", args.checkpoint_dir});
  if (!args.nvme_path.empty()) o.disks.push_back({"nvme", args.nvme_path});
  o.native_stacks = !args.no_native_stacks;
  o.thresholds.stall_after = Millis(static_cast<int64_t>(args.stall_after_s * 1000));
  o.report_every = Millis(static_cast<int64_t>(args.report_every_s * 1000));
  if (o.server_url.empty()) {
    if (const char* server = std::getenv("TRAINWATCH_SERVER"); server && *server) o.server_url = server;
  }
  if (const char* token = std::getenv("TRAINWATCH_TOKEN"); token && *token) o.token = token;
  o.thresholds.disk_free_bytes = static_cast<uint64_t>(args.disk_free_gb * 1e9);
  o.thresholds.host_memory_free_bytes = static_cast<uint64_t>(args.host_memory_free_gb * 1e9);
  return true;
}

// Serves until SIGINT or SIGTERM. The exit status: 0, 1 (the agent cannot start), 2 (usage).
int run_agent(const AgentArgs& args) {
  agent::AgentOptions o;
  if (!agent_options(args, o)) return 2;
  static SystemClock clock;
  auto started = agent::Agent::start(o, clock);
  if (!started) {
    std::fprintf(stderr, "trainwatch agent: %s\n", started.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "trainwatch agent: job %s on http://%s:%u/health%s%s\n", o.job.c_str(), o.host.c_str(),
               (*started)->port(), o.server_url.empty() ? "" : ", reporting to ", o.server_url.c_str());
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  sigset_t none;
  sigemptyset(&none);
  while (!g_stop) sigsuspend(&none);
  (*started)->stop();
  return 0;
}

}  // namespace

Command add_agent_options(CLI::App& sub) {
  auto args = std::make_shared<AgentArgs>();
  add_flags(sub, *args);
  Command cmd;
  cmd.app = &sub;
  cmd.run = [args]() -> int { return run_agent(*args); };
  return cmd;
}

Command add_agent_command(CLI::App& app) {
  return add_agent_options(
      *app.add_subcommand("agent", "Serve /health and /metrics for the training ranks on this node"));
}

void exec_agent_program(int argc, char** argv) {
  std::array<char, 4096> self{};
  const ssize_t n = readlink("/proc/self/exe", self.data(), self.size() - 1);
  if (n <= 0) return;
  const std::string exe(self.data(), static_cast<size_t>(n));
  std::string program = exe.substr(0, exe.rfind('/') + 1) + "trainwatch-agent";
  if (access(program.c_str(), X_OK) != 0) return;
  std::vector<char*> args = {program.data()};
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(program.c_str(), args.data());  // returns only on failure: the caller runs it in-process
}

}  // namespace trainwatch::cli
