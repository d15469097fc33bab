#!/usr/bin/env bash
# Installs the Debian packages nvsvp builds against, only those missing; with the argument `fuzz`
# also clang and its libFuzzer/sanitizer runtimes (the fuzz build, scripts/fuzz.sh).
# As root it runs apt-get; otherwise it prints the exact command and exits 1.
set -euo pipefail
packages=(build-essential cmake pkg-config libsystemc-dev verilator libyaml-cpp-dev
          libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev libspdlog-dev
          zlib1g-dev gtkwave python3-matplotlib parallel slurm-wlm munge openssh-server ccache)
# ccache: both builds (make test, make sanitize) reuse what an earlier build compiled;
# zlib: the RTL's FST writer; gtkwave: fst2vcd, which the tests read FST with; matplotlib: `nvsvp plot`;
# parallel, slurm-wlm and munge: the cluster scripts (scripts/study-parallel.sh, study-slurm.sh) and
# their tests, which start a one-node Slurm on this machine; openssh-server: the test of
# study-parallel.sh over --sshlogin, which starts an sshd of its own on a loopback port
if [ "${1:-}" = "fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "nvsvp: missing packages: ${missing[*]}" >&2
  echo "nvsvp: run as root, or install them with:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "nvsvp: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
