#!/usr/bin/env bash
# Installs the Debian packages trainwatch needs, and fetches the dashboard's third-party
# browser code (uPlot) into src/web/npm/node_modules: the only step that needs the network.
#   scripts/setup.sh build     what building and running need (scripts/demo, pip install ./python)
#   scripts/setup.sh package   that, and Debian's packaging tools (scripts/package)
#   scripts/setup.sh [all]     that, and every test's tool and peer (scripts/test; the default)
# Idempotent: packages already present are skipped, so a second run costs seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-all}

build_packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config
  # libraries (the design brief's dependency table; libssl-dev for webhook HMAC signatures)
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libcurl4-openssl-dev libssl-dev libyaml-cpp-dev libsqlite3-dev libsqlitecpp-dev
  libspdlog-dev libfmt-dev libcli11-dev libkainjow-mustache-dev
  # users' passwords hashed with Argon2id (auth/password_hash.h)
  libsodium-dev
  # the PostgreSQL store's client library (store.url)
  libpqxx-dev
  # cron schedules in any time zone: the time zone database and its library
  tzdata libcctz-dev
  # the Python module's extension (python/), built against Debian's python3
  python3-dev
  # fetching uPlot (below)
  curl ca-certificates
)

package_packages=(
  # shipping it (scripts/package): the Debian package's tooling and its lint
  debhelper dpkg-dev lintian
)

test_packages=(
  # conventions (scripts/format.sh, scripts/tidy.sh): one pinned version, called by its
  # versioned name, so a check's verdict does not change with the machine's default
  clang-format-15 clang-tidy-15
  # fuzzing (scripts/fuzz.sh): clang-15 brings libFuzzer and the sanitizer runtimes
  clang-15
  # a PostgreSQL server for the tests of store.url, which start their own
  postgresql
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-pytest python3-torch python3-aiosmtpd
  # a real OpenID provider for the single sign-on tests, built on authlib's server classes
  python3-authlib
  # pip install ./python (python/setup.py) and its test in a fresh virtual environment
  python3-venv python3-pip python3-setuptools python3-wheel
  chromium chromium-driver python3-selenium
  wrk
  # monitor types' test peers: a DNS server (dnsmasq), certificates (openssl), a real
  # Alertmanager and a real Prometheus (promtool for the metrics, rules and dashboard)
  dnsmasq-base openssl prometheus-alertmanager prometheus
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
  # the package test: systemd-analyze for the units
  systemd
)

case $profile in
  build) packages=("${build_packages[@]}") ;;
  package) packages=("${build_packages[@]}" "${package_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${package_packages[@]}" "${test_packages[@]}") ;;
  *)
    echo "usage: scripts/setup.sh [build|package|all]   (found '$profile')" >&2
    exit 2
    ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages: ${missing[*]} (run as root to install them)" >&2
    exit 1
  fi
  echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash scripts/fetch_web_vendor.sh
