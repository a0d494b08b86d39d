#!/bin/bash
# Slurm Prolog= (slurmd runs it as root on each node of a job, before the job's first step
# there): starts this node's trainwatch agent for the job, detached, as root so that it
# reads the slots of whichever user the ranks run as. epilog.sh stops it.
#
#   slurm.conf:  Prolog=/usr/share/trainwatch/slurm/prolog.sh
#                Epilog=/usr/share/trainwatch/slurm/epilog.sh
#   /etc/trainwatch/slurm.env (sourced; or the file TRAINWATCH_SLURM_ENV names):
#                TRAINWATCH_SERVER=http://trainwatch.example.internal:8080
#                TRAINWATCH_TOKEN=...            # the server's jobs.token
#                TRAINWATCH_AGENT_ARGS="--checkpoint-dir /checkpoints"
#
# The agent names the job as the ranks do: Slurm's job name (SLURM_JOB_NAME, which slurmd
# does not give a prolog, so it is asked of squeue) unless TRAINWATCH_JOB is set for both.
# A prolog that fails drains the node, so every failure here is logged and the job goes on.
set -u
# shellcheck source=deploy/slurm/slurm-env.sh
. "${BASH_SOURCE[0]%/*}/slurm-env.sh" || exit 0
log=$run_dir/$SLURM_JOB_ID.log

mkdir -p "$run_dir" || exit 0
if [[ -z ${TRAINWATCH_JOB:-} && -z ${SLURM_JOB_NAME:-} ]]; then
  SLURM_JOB_NAME=$(squeue -h -j "$SLURM_JOB_ID" -o %j 2>>"$log")
  export SLURM_JOB_NAME
fi
export SLURM_JOB_ID
# setsid: its own session, so that slurmd's clean-up of the prolog leaves it running.
# shellcheck disable=SC2086  # TRAINWATCH_AGENT_ARGS is a list of options
setsid "$agent" --listen "${TRAINWATCH_AGENT_LISTEN:-127.0.0.1:0}" ${TRAINWATCH_AGENT_ARGS:-} \
  </dev/null >>"$log" 2>&1 &
pid=$!
echo "$pid" >"$run_dir/$SLURM_JOB_ID.pid"
# slurmd kills the prolog's process group once it exits: wait (up to 10 s) until the agent
# leads a session of its own, or a loaded node may kill it before setsid has run.
for _ in $(seq 100); do
  [[ $(awk '{print $6}' "/proc/$pid/stat" 2>/dev/null) == "$pid" ]] && break
  sleep 0.1
done
exit 0
