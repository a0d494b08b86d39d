// The agent's own threads, for an agent hosted inside a rank (trainwatch.init(server=...)):
// their CPU time is the agent's, not the rank's, and the straggler rule must never count it
// against the rank that hosts it. Each agent thread registers itself as it starts; the
// sampler subtracts what they used from its host process's CPU time.
#pragma once

#include <cstdint>
#include <string>

namespace trainwatch::agent {

// Called first thing on each thread the agent starts (sampler, HTTP, pusher, probes).
void register_own_thread();

// The CPU time (clock ticks) of this process's registered threads, those that ended
// included (their last reading stays counted). Reads <proc_root>/self/task/<tid>/stat.
uint64_t own_threads_cpu_ticks(const std::string& proc_root);

}  // namespace trainwatch::agent
