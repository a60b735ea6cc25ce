#!/usr/bin/env bash
# debcheck.sh PKG.deb: checks shoal's Debian package as an administrator
# meets it. The archive's files and modes are read with dpkg-deb; then the
# package is installed with dpkg into a throwaway copy of this Debian system
# (an overlay of / with a tmpfs on top, in a private mount namespace, entered
# with chroot), where the unit is verified, the man pages rendered, the
# completion run, the config validated, and the package purged again: purge
# must leave nothing of it but /var/lib/shoal. Nothing reaches the host.
# DEBCHECK_ROOT=DIR overlays DIR instead of / (make deb-check-clean: a
# fresh debootstrap root, packaging/debroot.sh).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: debcheck.sh shoal_VERSION_amd64.deb (got $# arguments)" >&2; exit 2; }
deb=$(readlink -f "$1")
[ -f "$deb" ] || { echo "debcheck: no package $1: run 'make deb' first" >&2; exit 2; }
if [ "$(id -u)" != 0 ]; then
	echo "SKIP deb-check: needs root for a mount namespace and chroot"
	exit 0
fi
for tool in dpkg-deb unshare systemd-analyze man; do
	command -v "$tool" >/dev/null || { echo "debcheck: $tool is missing: run 'make deps'" >&2; exit 2; }
done
passed=0
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; passed=$((passed + 1)); }

# 1. The archive: every file where Debian wants it, with its mode and owner.
list=$(dpkg-deb -c "$deb" | awk '{print $1, $2, $6}')
entry() {
	grep -qxF -- "$1 root/root ./${2#/}" <<<"$list" || fail "archive: want $1 root/root $2, have: $(grep -F "./${2#/}" <<<"$list" || echo nothing)"
}
entry -rwxr-xr-x /usr/bin/shoal
entry -rwxr-xr-x /usr/bin/shoal-exec
entry -rw-r--r-- /lib/systemd/system/shoal.service
entry -rw-r--r-- /etc/shoal/shoal.hcl
entry -rw-r--r-- /etc/profile.d/shoal.sh
entry drwx------ /var/lib/shoal/
entry -rw-r--r-- /usr/share/bash-completion/completions/shoal
entry -rw-r--r-- /usr/share/zsh/vendor-completions/_shoal
entry -rw-r--r-- /usr/share/man/man1/shoal.1.gz
entry -rw-r--r-- /usr/share/man/man5/shoal.hcl.5.gz
entry -rw-r--r-- /usr/share/shoal/grafana/shoal-dashboard.json
for cmd in sbatch srun squeue scancel sinfo sacct scontrol; do
	grep -qxF -- "lrwxrwxrwx root/root ./usr/lib/shoal/slurm/bin/$cmd" <<<"$list" ||
		fail "archive: want /usr/lib/shoal/slurm/bin/$cmd, a link to /usr/bin/shoal"
done
ok "archive holds the binaries (shoal, shoal-exec), unit, config, data dir 0700, completions, man pages, the Grafana dashboard and the Slurm command links"
[ "$(dpkg-deb -I "$deb" conffiles | sort | tr '\n' ' ')" = "/etc/profile.d/shoal.sh /etc/shoal/shoal.hcl " ] ||
	fail "conffiles: want /etc/shoal/shoal.hcl and /etc/profile.d/shoal.sh, have $(dpkg-deb -I "$deb" conffiles)"
ok "/etc/shoal/shoal.hcl and /etc/profile.d/shoal.sh are conffiles"
unit=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./lib/systemd/system/shoal.service)
for want in 'ExecStart=/usr/bin/shoal agent --config /etc/shoal/shoal.hcl' 'Restart=on-failure' \
	'After=network-online.target' 'Wants=network-online.target' 'LimitNOFILE=65536' \
	'ConditionPathExists=/etc/shoal/token' 'User=root' 'Type=notify' 'WatchdogSec=30s' 'Delegate=yes' \
	'DelegateSubgroup=agent'; do
	grep -qxF "$want" <<<"$unit" || fail "shoal.service lacks $want"
done
ok "unit: root, --config, restart on failure, after network-online, LimitNOFILE, no start without a token, notify and watchdog, delegated cgroup"

# 2. Install, use and purge it in a throwaway copy of this system.
DEBCHECK_ROOT=${DEBCHECK_ROOT:-/}
[ -x "$DEBCHECK_ROOT/usr/bin/dpkg" ] || fail "DEBCHECK_ROOT=$DEBCHECK_ROOT is not a Debian root (no usr/bin/dpkg)"
export deb DEBCHECK_ROOT
inner=$(mktemp)
trap 'rm -f "$inner"' EXIT
unshare --mount --propagation private bash -euo pipefail -s >"$inner" 2>&1 <<'INNER' || { cat "$inner"; exit 1; }
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok   $*"; }
top=$(mktemp -d /tmp/debcheck.XXXXXX)
mount -t tmpfs tmpfs "$top"
mkdir "$top/upper" "$top/work" "$top/root"
R=$top/root
mount -t overlay overlay -o "lowerdir=$DEBCHECK_ROOT,upperdir=$top/upper,workdir=$top/work" "$R"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
cp "$deb" "$R/tmp/shoal.deb"
chr() { chroot "$R" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
# A clean start even on a machine where shoal was installed or run: these
# are the overlay's copies, not the host's.
if chr dpkg -s shoal >/dev/null 2>&1; then
	chr dpkg --purge shoal >/dev/null
fi
rm -rf "$R/var/lib/shoal" "$R/etc/shoal"

chr dpkg -i /tmp/shoal.deb >"$top/install.log" 2>&1 || fail "dpkg -i: $(cat "$top/install.log")"
ok "dpkg -i installs it"
[ "$(chr stat -c '%a %U' /var/lib/shoal)" = "700 root" ] || fail "/var/lib/shoal is $(chr stat -c '%a %U' /var/lib/shoal), want 700 root"
chr test ! -e /etc/systemd/system/multi-user.target.wants/shoal.service || fail "the package enabled shoal.service"
ok "data dir 0700 root; the service is not enabled (no token yet)"

out=$(chr shoal agent --config /etc/shoal/shoal.hcl --validate 2>&1) && fail "--validate passed without a token: $out"
grep -q 'shoal.hcl:[0-9]*: token_file: ' <<<"$out" || fail "--validate without a token: $out"
chr sh -c 'shoal keygen > /etc/shoal/token && chmod 600 /etc/shoal/token'
out=$(chr shoal agent --config /etc/shoal/shoal.hcl --validate 2>&1) || fail "--validate of the shipped config with a token: $out"
ok "shipped config: refused without a token (file:line: token_file), valid with one"

# A user's login shell points the CLI at the packaged socket once the
# agent listens there, and leaves root (token, TCP) and set values alone.
login() { chr setpriv --reuid="$1" --regid="$1" --clear-groups env -i PATH=/usr/bin:/bin ${2:+SHOAL_ADDR=$2} sh -c '. /etc/profile.d/shoal.sh; echo "${SHOAL_ADDR-unset}"'; }
[ "$(login 65534)" = unset ] || fail "profile.d/shoal.sh set SHOAL_ADDR with no socket: $(login 65534)"
if command -v python3 >/dev/null; then
	mkdir -p "$R/run/shoal"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$R/run/shoal/shoal.sock"
	[ "$(login 65534)" = unix:///run/shoal/shoal.sock ] || fail "profile.d/shoal.sh, a user with the socket there: SHOAL_ADDR=$(login 65534)"
	[ "$(login 0)" = unset ] || fail "profile.d/shoal.sh set root's SHOAL_ADDR: $(login 0)"
	[ "$(login 65534 https://node1:7948)" = https://node1:7948 ] || fail "profile.d/shoal.sh overrode a set SHOAL_ADDR"
	rm -r "$R/run/shoal"
	ok "profile.d/shoal.sh: users get SHOAL_ADDR=unix:///run/shoal/shoal.sock when the agent listens; root and set values are left alone"
else
	ok "profile.d/shoal.sh sets nothing without a socket (no python3 here to make one)"
fi

out=$(chr systemd-analyze verify /lib/systemd/system/shoal.service 2>&1) || fail "systemd-analyze verify: $out"
# systemd before 254 (Debian 12's 252) does not know DelegateSubgroup= and
# says so; the agent then moves itself into that leaf.
sdver=$(chr systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
if [ "${sdver:-0}" -lt 254 ]; then
	out=$(grep -v "Unknown key 'DelegateSubgroup' in section \[Service\], ignoring" <<<"$out" || true)
fi
[ -z "$out" ] || fail "systemd-analyze verify warns: $out"
ok "systemd-analyze verify accepts shoal.service"

# ExecReload as systemd runs it (no systemd manager here to ask): its
# words split as systemd's quoting does, $$ unescaped, MAINPID set; the
# main process must get a SIGHUP.
reload=$(sed -n 's/^ExecReload=//p' "$R/lib/systemd/system/shoal.service")
eval "set -- ${reload//\$\$/\$}" # quoted in the unit: eval leaves $MAINPID to sh
# --default-signal: a shell started with SIGHUP ignored (under nohup) may
# not trap it, and the check would fail for the caller's reason, not ours.
chr env --default-signal=HUP sh -c 'trap "echo hup >/tmp/hup; exit 0" HUP; echo $$ >/tmp/main.pid; sleep 10 & wait' & # gives up after 10s
main=$!
for _ in $(seq 100); do [ -s "$R/tmp/main.pid" ] && break; sleep 0.05; done
out=$(chr env MAINPID="$(cat "$R/tmp/main.pid")" "$@" 2>&1) || fail "ExecReload ($reload): $out"
wait "$main" || true
[ "$(cat "$R/tmp/hup" 2>/dev/null)" = hup ] || fail "ExecReload ($reload) sent the main process no SIGHUP"
ok "ExecReload sends the main process SIGHUP with the root's own tools"

for page in shoal shoal.hcl; do
	out=$(chr env MANWIDTH=80 man --warnings -P cat "$page" 2>"$top/man.err") || fail "man $page: $(cat "$top/man.err")"
	[ ! -s "$top/man.err" ] || fail "man $page warns: $(cat "$top/man.err")"
	grep -q "NAME" <<<"$out" || fail "man $page rendered no NAME section"
done
out=$(chr env MANWIDTH=80 man --warnings -l /usr/share/man/man1/shoal.1.gz 2>&1 >/dev/null)
[ -z "$out" ] || fail "man -l shoal.1.gz: $out"
ok "man shoal and man shoal.hcl render without warnings"

out=$(chr env PATH=/usr/lib/shoal/slurm/bin:/usr/bin:/bin sinfo --help 2>&1) || fail "sinfo --help through the installed link: $out"
grep -q "^sinfo lists" <<<"$out" || fail "the installed sinfo link does not answer as sinfo: $out"
ok "the Slurm command links answer to their names"

comp='source /usr/share/bash-completion/completions/shoal; _shoal; printf "%s\n" "${COMPREPLY[@]}"'
got=$(chr bash -c "COMP_WORDS=(shoal ag); COMP_CWORD=1; $comp")
[ "$got" = agent ] || fail "bash completion of 'shoal ag': $got"
got=$(chr bash -c "COMP_WORDS=(shoal agent --data); COMP_CWORD=2; $comp")
[ "$got" = --data-dir ] || fail "bash completion of 'shoal agent --data': $got"
if chr sh -c 'command -v zsh' >/dev/null; then
	chr zsh -n /usr/share/zsh/vendor-completions/_shoal || fail "zsh -n _shoal"
	ok "bash completion completes commands and flags; zsh's parses"
else
	ok "bash completion completes commands and flags (no zsh here to parse _shoal)"
fi

rm -f "$R/etc/shoal/token" # the administrator's file, not the package's
echo state >"$R/var/lib/shoal/raft.db" # what a running agent leaves
chr dpkg --purge shoal >"$top/purge.log" 2>&1 || fail "dpkg --purge: $(cat "$top/purge.log")"
# What install and purge changed is exactly the overlay's upper layer (the
# lower one may be the live host, which other work may change meanwhile):
# besides dpkg's own records, only the data dir may remain, and no file of
# the system may have been replaced or removed (a whiteout is a file here).
cd "$top/upper"
left=$(find . -xdev \( -path ./var/lib/dpkg -o -path ./var/log -o -path ./var/cache \) -prune -o ! -type d -print | sed 's|^\.||' | sort)
[ "$left" = /var/lib/shoal/raft.db ] || fail "purge left or changed files other than the data dir's: $left"
newdirs=$(find . -xdev -type d | sed 's|^\.||' | while read -r d; do [ -z "$d" ] || [ -e "${DEBCHECK_ROOT%/}$d" ] || echo "$d"; done)
[ "$newdirs" = /var/lib/shoal ] || fail "purge left directories other than /var/lib/shoal: $newdirs"
cd /
ok "dpkg --purge leaves nothing but /var/lib/shoal and the agent's state in it"
INNER
cat "$inner"
echo "deb-check (root: $DEBCHECK_ROOT): $((passed + $(grep -c '^ok ' "$inner"))) passed, 0 failed"
