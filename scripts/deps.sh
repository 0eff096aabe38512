#!/bin/sh
# Install the Debian packages ftrun needs. With --if-missing, only when one of
# them is not installed yet (so ordinary builds do not touch apt).
set -e
only_missing=0
if [ "$1" = "--if-missing" ]; then only_missing=1; shift; fi
missing=""
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    [ "$only_missing" = 1 ] || echo "deps: all of $* installed"
    exit 0
fi
echo "deps: installing$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
