#include "core/process_exit.h"

#include <csignal>

namespace trainwatch {

ProcessExit exit_from_wait_status(uint32_t status) {
  ProcessExit e;
  const uint32_t term_signal = status & 0x7f;
  if (term_signal == 0) {
    e.code = static_cast<int>((status >> 8) & 0xff);
  } else {
    e.signal = static_cast<int>(term_signal);
    e.core_dumped = (status & 0x80) != 0;
  }
  return e;
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return "signal " + std::to_string(signal);
  }
}

std::string describe_exit(const ProcessExit& e) {
  if (e.signal == 0) return "exited with code " + std::to_string(e.code);
  std::string out = "was killed by " + signal_name(e.signal);
  if (e.oom_killed) out += " (the kernel's OOM killer)";
  if (e.core_dumped) out += " (core dumped)";
  return out;
}

}  // namespace trainwatch
