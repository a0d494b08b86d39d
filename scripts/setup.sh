#!/usr/bin/env bash
# Installs every Debian package trainwatch needs to build, test and benchmark, and fetches
# the dashboard's third-party browser code (uPlot) with `npm ci` into src/web/npm/node_modules:
# the only step that needs npm and the network; CMake copies what it fetched.
# Idempotent: packages already present are skipped, so a second run costs seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config
  # conventions (scripts/format.sh, scripts/tidy.sh): one pinned version, called by its
  # versioned name, so a check's verdict does not change with the machine's default
  clang-format-15 clang-tidy-15
  # fuzzing (scripts/fuzz.sh): clang-15 brings libFuzzer and the sanitizer runtimes
  clang-15
  # libraries (the design brief's dependency table; libssl-dev for webhook HMAC signatures)
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libcurl4-openssl-dev libssl-dev libyaml-cpp-dev libsqlite3-dev libsqlitecpp-dev
  libspdlog-dev libfmt-dev libcli11-dev libkainjow-mustache-dev
  # users' passwords hashed with Argon2id (auth/password_hash.h)
  libsodium-dev
  # the PostgreSQL store (store.url); the server is for the tests, which start their own
  libpqxx-dev postgresql
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev python3-pytest python3-torch python3-aiosmtpd
  # a real OpenID provider for the single sign-on tests, built on authlib's server classes
  python3-authlib
  # pip install ./python (python/setup.py) and its test in a fresh virtual environment
  python3-venv python3-pip python3-setuptools python3-wheel
  chromium chromium-driver python3-selenium
  wrk curl
  # monitor types' test peers: a DNS server (dnsmasq), certificates (openssl), the time
  # zone database and its library for cron schedules, a real Alertmanager
  dnsmasq-base openssl tzdata libcctz-dev prometheus-alertmanager
  # a one-node Slurm cluster for the launcher test (tests/integration/test_slurm.py)
  slurm-wlm munge
  # peers measured beside trainwatch in bench/ (see ../shared/peers)
  nginx-light prometheus-blackbox-exporter python3-prometheus-client hyperfine
  # a load balancer in front of several replicas (bench/heartbeat/replicas.py)
  haproxy
  # a replica's wall clock stepped, in the replica fault suite (tests/integration/faults.py)
  libfaketime
  # bench/stacks: the stack tools one uses on a hung process today; eu-stack (elfutils)
  # also gives the agent native frames of an overdue rank (agent/native_capture.h)
  gdb elfutils
  # shipping it (scripts/package, tests/integration/test_package.py): the Debian package's
  # tooling and its lint, systemd-analyze for the units, promtool (prometheus) for the
  # metrics, rules and dashboard
  debhelper lintian systemd prometheus
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm itself: Debian's package, unless another (e.g. NodeSource's nodejs) already provides it.
if ! command -v npm >/dev/null; then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: npm missing (run as root to install it)" >&2
    exit 1
  fi
  echo "setup: installing npm"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null
fi

# uPlot for the dashboard, from the committed lock file. Skipped while node_modules matches
# the lock file (so a machine without the network can run setup again); --prefer-offline
# takes it from npm's cache when that has it.
web_npm=src/web/npm
if ! cmp -s "$web_npm/package-lock.json" "$web_npm/node_modules/.trainwatch-lock.json" \
   || [[ ! -f $web_npm/node_modules/uplot/dist/uPlot.iife.min.js ]]; then
  echo "setup: npm ci in $web_npm (uPlot)"
  npm ci --prefix "$web_npm" --prefer-offline --no-audit --no-fund --ignore-scripts --loglevel=error
  cp "$web_npm/package-lock.json" "$web_npm/node_modules/.trainwatch-lock.json"
fi
