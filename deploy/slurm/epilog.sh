#!/bin/bash
# Slurm Epilog= (slurmd, as root, on each node when the job ends): stops the agent prolog.sh
# started for this job, with SIGTERM (its last node report goes out first), SIGKILL after
# 10 s. Only that agent: the pid file's process must still be the agent program.
set -u
# shellcheck source=deploy/slurm/slurm-env.sh
. "${BASH_SOURCE[0]%/*}/slurm-env.sh" || exit 0
pid_file=$run_dir/$SLURM_JOB_ID.pid

[[ -r $pid_file ]] || exit 0
pid=$(<"$pid_file")
if [[ $pid =~ ^[0-9]+$ && $(readlink "/proc/$pid/exe" 2>/dev/null) == "$(readlink -f "$agent")" ]]; then
  kill -TERM "$pid"
  for _ in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
fi
rm -f "$pid_file" "$run_dir/$SLURM_JOB_ID.log"
exit 0
