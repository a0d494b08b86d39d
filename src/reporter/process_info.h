// What /proc says about a process: whether it exists, its state letter and its start time.
// A pid alone does not identify a process (pids are reused); pid plus start time does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainwatch::reporter {

struct ProcessInfo {
  int32_t pid = 0;
  char state = '?';          // R S D T t Z X I ... (proc(5))
  uint64_t start_ticks = 0;  // field 22 of /proc/<pid>/stat, clock ticks since boot
  uint64_t cpu_ticks = 0;    // utime + stime (fields 14, 15), clock ticks
  uint64_t rss_pages = 0;    // resident set size (field 24), pages
  // The wait status its parent will read (field 52, Linux 3.5 on): meaningful once the
  // process is a zombie, which is how an agent that is not its parent learns how it ended.
  std::optional<uint32_t> exit_status;
};

// Reads <proc_root>/<pid>/stat. nullopt when the process does not exist (or cannot be read).
std::optional<ProcessInfo> read_process(int32_t pid, const std::string& proc_root = "/proc");

// Parses the text of a stat file; nullopt when it is malformed.
std::optional<ProcessInfo> parse_stat(int32_t pid, const std::string& text);

// This process's start time (read from /proc each call: a forked child differs).
uint64_t self_start_ticks();

// Dead for our purposes: gone, a zombie or dead, or the pid now belongs to a process that
// started at another time.
bool is_dead(const std::optional<ProcessInfo>& info, uint64_t expected_start_ticks);

}  // namespace trainwatch::reporter
