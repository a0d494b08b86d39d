#!/bin/bash
# Slurm Epilog= (slurmd, as root, on each node when the job ends): stops the agent prolog.sh
# started for this job, with SIGTERM (its last node report goes out first), SIGKILL after
# 10 s. Only that agent: the pid file's process must still be the agent program.
set -u
# slurmd gives its scripts a bare environment.
export PATH=${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}
env_file=${TRAINWATCH_SLURM_ENV:-/etc/trainwatch/slurm.env}
if [[ -r $env_file ]]; then
  set -a
  # shellcheck source=/dev/null
  . "$env_file"
  set +a
fi
run_dir=${TRAINWATCH_SLURM_RUN_DIR:-/run/trainwatch/slurm}
agent=${TRAINWATCH_AGENT:-/usr/bin/trainwatch-agent}
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
