#!/usr/bin/env bash
# Installs the Debian packages named as arguments that are not installed yet: asks dpkg first and
# runs apt-get (through sudo when not root) only for what is missing, so it is fast and silent when
# everything is there. Shared by scripts/install_deps.sh (what nvfresh needs to build) and
# scripts/install_test_tools.sh (what only the tests need).
# Usage: scripts/install_apt_packages.sh [--no-install-recommends] WHO PACKAGE...
#   WHO prefixes the messages; --no-install-recommends goes to apt-get (the build's packages
#   recommend fonts, guile and manual pages: 66 MB more to download that no build reads)
set -euo pipefail
apt_options=()
if [ "${1:-}" = "--no-install-recommends" ]; then
  apt_options+=("$1")
  shift
fi
who=${1:?usage: install_apt_packages.sh [--no-install-recommends] WHO PACKAGE...}
shift
missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
((${#missing[@]})) || exit 0
echo "$who: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${apt_options[@]}" "${missing[@]}"
