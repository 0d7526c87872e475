#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need (DESIGN §4). Run as root (or with sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
    build-essential cmake ninja-build pkg-config clang \
    libpcre2-dev libutf8proc-dev libjansson-dev libmicrohttpd-dev \
    python3 python3-requests
