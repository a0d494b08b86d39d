#!/usr/bin/env bash
# Installs every Debian package trainwatch needs to build, test and benchmark.
# Idempotent: packages already present are skipped, so a second run costs seconds.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang-format
  # fuzzing (scripts/fuzz.sh): clang-15 brings libFuzzer and the sanitizer runtimes
  clang-15
  # libraries (the design brief's dependency table; libssl-dev for webhook HMAC signatures)
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libcurl4-openssl-dev libssl-dev libyaml-cpp-dev libsqlite3-dev libsqlitecpp-dev
  libspdlog-dev libfmt-dev libcli11-dev libkainjow-mustache-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-dev python3-pytest python3-torch python3-aiosmtpd
  chromium chromium-driver python3-selenium
  wrk curl
  # peers measured beside trainwatch in bench/ (see ../shared/peers)
  nginx-light prometheus-blackbox-exporter python3-prometheus-client hyperfine
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
