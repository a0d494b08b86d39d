// How a process ended, as the kernel tells its parent (a wait status), and the words for
// it. The agent learns it for ranks that are not its children from the kernel's process
// events (agent/exit_watch.h); the server phrases alerts and classifies interruptions with it.
#pragma once

#include <cstdint>
#include <string>

namespace trainwatch {

struct ProcessExit {
  int code = -1;   // exit code when it exited; -1 when a signal ended it
  int signal = 0;  // the signal that ended it; 0 when it exited
  bool core_dumped = false;
  bool oom_killed = false;  // SIGKILL while the host's OOM-kill counter rose (agent's judgement)
};

// From a wait status (waitpid(2), the connector's exit_code): WIFEXITED / WIFSIGNALED.
ProcessExit exit_from_wait_status(uint32_t status);

// "SIGKILL", "SIGTERM", ...; "signal 42" for one without a name here.
std::string signal_name(int signal);

// "exited with code 1", "was killed by SIGKILL (the kernel's OOM killer)",
// "was killed by SIGSEGV (core dumped)".
std::string describe_exit(const ProcessExit& e);

}  // namespace trainwatch
