#!/usr/bin/env bash
# Installs the Debian 12 packages hexplan needs to build and test. Idempotent: quiet and fast when
# everything is present. Must run as root (or with sudo available) on a fresh machine.
set -euo pipefail

PACKAGES=(
  build-essential cmake make pkg-config git
  clang libclang-rt-14-dev clang-format lld
  libonnx-dev libprotobuf-dev protobuf-compiler
  coinor-libcbc-dev
  nlohmann-json3-dev libcli11-dev libyaml-cpp-dev
  libopenblas-dev libdnnl-dev libxnnpack-dev libpthreadpool-dev
  libopenmpi-dev openmpi-bin iproute2
  libonnx-testdata
  libgtest-dev libgmock-dev libbenchmark-dev
  librsvg2-bin libxml2-utils
  python3 python3-dev pybind11-dev python3-numpy python3-pytest
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
