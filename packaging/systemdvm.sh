#!/usr/bin/env bash
# systemdvm.sh ROOT PKG.deb: shoal's package under systemd as PID 1 on a
# pure cgroup v2 host, which a hybrid-cgroup machine (or a container) cannot
# show. ROOT is a Debian root with a kernel and systemd (packaging/debroot.sh
# with DEBROOT_PACKAGES="linux-image-amd64 systemd-sysv udev ..."; make
# systemd-vm makes a Debian 13 one). A copy of it becomes the disk of a
# KVM virtual machine with no network, booted with its own kernel; a
# one-shot unit there installs the package, starts shoal.service and
# checks, printing ok or FAIL lines on the serial console, which this
# script shows: readiness (Type=notify), the watchdog, the delegated
# cgroup with the agent in a leaf and the controllers on for jobs, a --mem
# job OOM-killed inside its limit, and `systemctl restart shoal` while a
# job runs: the job runs on through the restart, adopted by the new agent,
# and ends once, in attempt 1.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: systemdvm.sh ROOT shoal_VERSION_amd64.deb (got $# arguments)" >&2; exit 2; }
root=$(readlink -f "$1")
deb=$(readlink -f "$2")
[ "$(id -u)" = 0 ] || { echo "systemdvm: needs root (mkfs of the root's files, /dev/kvm)" >&2; exit 2; }
[ -w /dev/kvm ] || [ "${SYSTEMDVM_ACCEL:-}" = tcg ] || { echo "systemdvm: no /dev/kvm (SYSTEMDVM_ACCEL=tcg emulates, slowly)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "systemdvm: qemu-system-x86_64 is missing: apt-get install qemu-system-x86" >&2; exit 2; }
kernel=$(ls "$root"/boot/vmlinuz-* 2>/dev/null | sort | tail -1)
initrd=$(ls "$root"/boot/initrd.img-* 2>/dev/null | sort | tail -1)
[ -n "$kernel" ] && [ -n "$initrd" ] || { echo "systemdvm: $root has no kernel and initrd in /boot" >&2; exit 2; }
work=$(mktemp -d /tmp/systemdvm.XXXXXX)
trap 'umount "$work/merged" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir "$work/upper" "$work/ovl" "$work/merged"
mount -t overlay overlay -o "lowerdir=$root,upperdir=$work/upper,workdir=$work/ovl" "$work/merged"
M=$work/merged
cp "$deb" "$M/root/shoal.deb"
echo shoalvm >"$M/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 shoalvm\n' >"$M/etc/hosts"
cat >"$M/root/check.sh" <<'CHECK'
#!/bin/sh
# Runs once at boot (shoal-check.service); every line goes to the console.
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }
echo "check: $(uname -r), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'), $(stat -fc %T /sys/fs/cgroup) at /sys/fs/cgroup"
dpkg -i /root/shoal.deb >/root/dpkg.log 2>&1 && ok "dpkg -i shoal.deb" || fail "dpkg -i: $(tail -3 /root/dpkg.log)"
shoal keygen >/etc/shoal/token && chmod 600 /etc/shoal/token
printf 'name = "vm1"\nbind = "127.0.0.1"\nbootstrap_expect = 1\nplacement_model_wait = "0s"\n' >>/etc/shoal/shoal.hcl
systemctl start shoal # Type=notify: returns once the agent says READY=1
prop() { systemctl show shoal -p "$1" --value; }
echo "     shoal.service: $(prop ActiveState)/$(prop SubState), status \"$(prop StatusText)\", watchdog $(prop WatchdogUSec), delegate $(prop Delegate)"
[ "$(prop ActiveState)" = active ] && [ "$(prop StatusText)" = "joined; state read" ] &&
	ok "systemctl start returned once the agent was ready (Type=notify)" || fail "shoal.service after start"
[ "$(prop WatchdogUSec)" = 30s ] && [ "$(prop Delegate)" = yes ] && ok "watchdog 30s, cgroup delegated" || fail "watchdog or delegation"
main=$(systemctl show -p MainPID --value shoal)
cg=$(sed -n 's/^0:://p' "/proc/$main/cgroup")
sub=$(cat /sys/fs/cgroup/system.slice/shoal.service/cgroup.subtree_control)
echo "     agent in $cg; shoal.service enables: $sub"
[ "$cg" = /system.slice/shoal.service/agent ] && ok "the agent runs in a leaf of its delegated cgroup" || fail "agent's cgroup $cg"
case " $sub " in *" memory "*) case " $sub " in *" cpu "*) ok "memory and cpu enabled for the jobs' cgroups" ;; *) fail "no cpu in $sub" ;; esac ;; *) fail "no memory in $sub" ;; esac
shoal nodes | sed 's/^/     /'
# A job that takes more memory than it asked for is killed by the kernel
# inside its own limit; the node and the agent go on.
out=$(shoal run -n 1 --mem 64M --mpi none -- sh -c 'x=$(head -c 200000000 /dev/zero | tr "\0" a); echo survived' 2>&1)
code=$?
echo "$out" | sed 's/^/     /'
if [ $code -eq 137 ] && ! echo "$out" | grep -q survived; then ok "--mem 64M job OOM-killed (exit $code)"; else fail "--mem job: exit $code"; fi
grep -h oom_kill /sys/fs/cgroup/system.slice/shoal.service/*/memory.events 2>/dev/null | sed 's/^/     parent /'
journalctl -k --no-pager | grep -i 'memory cgroup out of memory' | tail -1 | sed 's/^/     kernel: /'
id=$(shoal job --json 1 | grep -o '"reason": "[^"]*"' | head -1)
echo "     job 1: $id"
systemctl is-active --quiet shoal && ok "the agent survived the job's OOM" || fail "the agent died with the job"
# systemctl restart while a job runs: the unit sends the agent its
# RestartKillSignal, the agent leaves the job running under its
# supervisor, and the restarted agent adopts it: the job runs to its end
# once, in attempt 1, every line of its output kept.
id=$(shoal submit -n 1 --mpi none -- sh -c 'for i in $(seq 10); do echo "tick $i attempt $SHOAL_ATTEMPT"; sleep 1; done; echo "finished attempt $SHOAL_ATTEMPT"')
for _ in $(seq 100); do shoal job --json "$id" | grep -q '"state": "running"' && break; sleep 0.2; done
sleep 2
old=$(systemctl show -p MainPID --value shoal)
systemctl restart shoal
new=$(systemctl show -p MainPID --value shoal)
[ "$old" != "$new" ] && [ "$(prop StatusText)" = "joined; state read" ] && ok "systemctl restart shoal: a new agent ($old -> $new), ready again" || fail "restart: agent $old -> $new"
for _ in $(seq 300); do st=$(shoal job --json "$id" | grep -o '"state": "[a-z]*"' | head -1); case $st in *done* | *failed* | *killed*) break ;; esac; sleep 0.2; done
j=$(shoal job "$id")
echo "$j" | sed 's/^/     /'
logs=$(shoal logs "$id" 2>&1)
echo "$logs" | tail -2 | sed 's/^/     log: /'
if echo "$j" | grep -q '^State: *done' && echo "$j" | grep -q '^Attempts: *1 of' &&
	[ "$(echo "$logs" | grep -c '^finished attempt 1')" = 1 ] && [ "$(echo "$logs" | grep -c '^tick')" = 10 ]; then
	ok "the job ran on through the restart and ended once, in attempt 1 ($(echo "$j" | sed -n 's/^Attempts: *//p'))"
else
	fail "after the restart: $(echo "$j" | grep -E '^(State|Attempts)' | tr '\n' ' ')"
fi
journalctl -u shoal --no-pager | grep -iE 'ready|adopt|left-over|cgroup|watchdog' | tail -8 | sed 's/^/     journal: /'
echo "check: done, failed=$failed"
CHECK
chmod 755 "$M/root/check.sh"
cat >"$M/etc/systemd/system/shoal-check.service" <<'UNIT'
[Unit]
Description=check shoal's package under systemd
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/root/check.sh
ExecStopPost=/bin/systemctl --no-block poweroff
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
UNIT
mkdir -p "$M/etc/systemd/system/multi-user.target.wants"
ln -sf /etc/systemd/system/shoal-check.service "$M/etc/systemd/system/multi-user.target.wants/shoal-check.service"
# No console login and no network to wait for in here.
ln -sf /dev/null "$M/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$M/etc/systemd/system/systemd-networkd-wait-online.service"
echo "systemdvm: making the disk"
truncate -s 3G "$work/disk.img"
mkfs.ext4 -q -d "$M" "$work/disk.img"
umount "$M"
echo "systemdvm: booting $(basename "$kernel") with systemd as PID 1 (${SYSTEMDVM_ACCEL:-kvm}, no network)"
# SYSTEMDVM_ACCEL=tcg emulates the CPU (slow) where KVM cannot run this
# kernel (nested virtualisation that fails to emulate its instructions).
accel=(-enable-kvm -cpu host)
[ "${SYSTEMDVM_ACCEL:-kvm}" = tcg ] && accel=(-accel tcg -cpu max)
timeout "${SYSTEMDVM_TIMEOUT:-600}" qemu-system-x86_64 "${accel[@]}" -m 1536 -smp 2 -nodefaults -display none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" -append "root=/dev/vda rw console=ttyS0 systemd.show_status=0" \
	-drive "file=$work/disk.img,format=raw,if=virtio" -serial "file:$work/console.log" || true
grep -aE '^(ok|FAIL|check:|     )' "$work/console.log" | tr -d '\r'
grep -aq '^check: done, failed=0' "$work/console.log" ||
	{ echo "systemdvm: the checks did not all pass; the console's end:"; tr -d '\r' <"$work/console.log" | tail -25; exit 1; }
