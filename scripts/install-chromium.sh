#!/usr/bin/env bash
# Installs Debian's Chromium, which the viewer's browser tests drive (playwright cannot download browsers
# here). Run as root or with sudo; npm test skips the browser tests without it (CI fails instead).
set -euo pipefail
if [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  echo "chromium: ${CHROMIUM_PATH:-/usr/bin/chromium} is already there"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
echo "chromium: installed $(command -v chromium)"
