# Sourced by prolog.sh and epilog.sh: the settings both read, from the site's env file.
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
