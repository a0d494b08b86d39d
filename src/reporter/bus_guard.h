// Keeps a truncated slot file from killing the process that maps it.
//
// Why a signal handler: a slot file is an ordinary tmpfs file that several processes map
// shared (every rank of the job on the node, and the agent). When anyone shrinks it
// (`truncate -s 0`), the kernel removes the pages from every mapping and the next access to
// one raises SIGBUS — in a rank, inside a training step. Checking the size first cannot
// help (the file can shrink between the check and the store), the per-step path may not
// make a syscall, and sealing (F_SEAL_SHRINK) only exists for memfd files, which other
// processes cannot open by name and which vanish with their creator. So the process
// installs one SIGBUS handler that, for a fault inside a guarded mapping, maps zero-filled
// anonymous memory over the whole mapping (MAP_FIXED, same protection) and returns: the
// faulting store or load is retried and succeeds. From then on the writer's reports land in
// private memory nobody reads and the reader sees zeros, which fail the header check —
// training goes on, the agent reports the file as malformed.
//
// Faults outside every guarded mapping go to the handler that was installed before ours
// (or the default action, which kills the process exactly as it would have without us).
// A handler installed after ours that re-raises the signal (Python's faulthandler does)
// reaches us with no fault address; we then look for a guarded file that has shrunk (fstat
// of the descriptor we keep) and repair that mapping, so the retried access succeeds.
//
// Cost: nothing on the step path. The table is a fixed array read by the handler without
// locks; registering and removing happen at open and close.
#pragma once

#include <cstddef>

namespace trainwatch::reporter {

// Mappings guarded at once in one process (slot files open for writing and reading). At the
// bound guard_mapping returns false and the caller refuses the open ("too many slot files").
inline constexpr int kMaxGuardedMappings = 64;

// Guards [base, base+size), a MAP_SHARED mapping of fd with protection prot. fd must stay
// open until unguard_mapping. lost_line (may be empty) is written to stderr, once, when the
// mapping is replaced; at most kMaxLostLine bytes are kept (a longer line is cut and still
// ends in a newline).
inline constexpr size_t kMaxLostLine = 480;
bool guard_mapping(void* base, size_t size, int fd, int prot, const char* lost_line);
void unguard_mapping(void* base);

// True once the mapping at base was replaced by zero pages because its file shrank.
bool mapping_lost(const void* base);

}  // namespace trainwatch::reporter
