// The process's descriptor limit (RLIMIT_NOFILE). systemd and most shells start services
// with a soft limit of 1,024 and a far higher hard one; every client connection, check,
// alert delivery and store file is a descriptor, so `serve` and `agent` raise the soft
// limit to the hard one at start. Raising it needs no privilege; when it fails (or the
// hard limit is the soft one, as under `prlimit --nofile=1024:1024`) the process runs
// with what it has and sizes its connection bound to fit (http/connection_budget.h).
#pragma once

#include <cstdint>
#include <string>

namespace trainwatch::cli {

struct FdLimit {
  uint64_t before = 0;  // the soft limit found
  uint64_t soft = 0;    // the soft limit in force now
  uint64_t hard = 0;
  std::string error;  // why raising failed; empty when it worked or was not needed
};

FdLimit raise_fd_limit();

// One line for the log: "descriptor limit raised from 1024 to 524288" or why not.
std::string describe(const FdLimit& limit);

}  // namespace trainwatch::cli
