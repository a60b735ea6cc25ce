#!/usr/bin/env bash
# debroot.sh DIR: makes DIR a clean Debian root for make deb-check-clean,
# once: debootstrap's minbase variant from the Debian mirror, plus the
# tools the checks run inside it (systemd for systemd-analyze, man-db,
# bash-completion, zsh), none of which shoal's package depends on. A DIR
# already made is kept as it is (delete it to start again); debcheck.sh
# only ever mounts it as the lower layer of an overlay, so it stays clean.
# Needs root, debootstrap and the mirror (DEBROOT_MIRROR); about 3 minutes
# and 300 MB the first time. DEBROOT_SUITE picks the release (bookworm);
# DEBROOT_PACKAGES are installed on top with apt-get inside the root, which
# resolves alternatives and recommends as a site would meet them (make
# compat-trixie: openmpi-bin, mpich, lammps).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: debroot.sh DIR (got $# arguments)" >&2; exit 2; }
dir=$1
suite=${DEBROOT_SUITE:-bookworm}
mirror=${DEBROOT_MIRROR:-http://deb.debian.org/debian}
if [ -e "$dir/.shoal-debroot" ]; then
	echo "debroot: using $dir ($(cat "$dir/.shoal-debroot"))"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "debroot: debootstrap needs root" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "debroot: debootstrap is missing: apt-get install debootstrap" >&2; exit 2; }
tmp=$dir.tmp
rm -rf "$tmp"
mkdir -p "$(dirname "$dir")"
echo "debroot: debootstrap --variant=minbase $suite into $dir from $mirror"
debootstrap --variant=minbase --include=systemd,man-db,bash-completion,zsh "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1 ||
	{ tail -20 "$tmp.log" >&2; echo "debroot: debootstrap failed (log: $tmp.log); is $mirror reachable?" >&2; exit 1; }
if [ -n "${DEBROOT_PACKAGES:-}" ]; then
	echo "debroot: apt-get install $DEBROOT_PACKAGES"
	# apt's maintainer scripts want /proc; the mount is undone even on failure.
	mount -t proc proc "$tmp/proc"
	trap 'umount "$tmp/proc" 2>/dev/null || true' EXIT
	# shellcheck disable=SC2086 # a list of package names
	chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $DEBROOT_PACKAGES >>"$tmp.log" 2>&1 ||
		{ tail -20 "$tmp.log" >&2; echo "debroot: apt-get install failed (log: $tmp.log)" >&2; exit 1; }
	umount "$tmp/proc"
fi
chroot "$tmp" apt-get clean
echo "$suite minbase from $mirror, $(date -u +%Y-%m-%dT%H:%MZ)" >"$tmp/.shoal-debroot"
mv "$tmp" "$dir"
rm -f "$tmp.log"
