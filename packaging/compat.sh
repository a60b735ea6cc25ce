#!/usr/bin/env bash
# compat.sh ROOT SHOAL SHOAL_DEV: runs MPI jobs through shoal on another
# Debian release, as a lab that installs it there would meet it. ROOT is a
# Debian root with openmpi-bin, mpich, lammps and their compilers
# (packaging/debroot.sh with DEBROOT_PACKAGES; make compat-trixie makes a
# Debian 13 one: Open MPI 5 on PRRTE, MPICH 4.2). ROOT stays clean: it is
# the lower layer of an overlay in a private mount and PID namespace,
# entered with chroot, and every process started in there dies with the
# namespace, on failure too. The agents listen on loopback (ports from
# COMPAT_BASE_PORT, 27946, on) in this machine's network namespace.
#
# Three agents on loopback; through `shoal run` and through batch scripts'
# steps, which find the allocation in the environment shoal sets: an MPICH
# ring, an Open MPI ring and LAMMPS (Debian's lmp links Open MPI only),
# and Open MPI ranks spread over three nodes. Each prints ok or FAIL; a
# spread check wants a rank on every node of the allocation, so a hostfile
# variable the launcher ignores (Open MPI 5 reads PRRTE's names, not
# ORTE's) fails it instead of crowding the ranks on the head.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: compat.sh ROOT SHOAL SHOAL_DEV (got $# arguments)" >&2; exit 2; }
root=$(readlink -f "$1")
shoal=$(readlink -f "$2")
dev=$(readlink -f "$3")
repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "compat: needs root for a mount namespace and chroot" >&2; exit 2; }
[ -x "$root/usr/bin/mpirun.openmpi" ] && [ -x "$root/usr/bin/mpiexec.mpich" ] && [ -x "$root/usr/bin/lmp" ] ||
	{ echo "compat: $root lacks mpirun.openmpi, mpiexec.mpich or lmp: make it with packaging/debroot.sh" >&2; exit 2; }
export root shoal dev repo
export base=${COMPAT_BASE_PORT:-27946}
unshare --mount --pid --fork --propagation private bash -euo pipefail -s <<'INNER'
top=$(mktemp -d /tmp/compat.XXXXXX)
mount -t tmpfs tmpfs "$top"
mkdir "$top/upper" "$top/work" "$top/root"
R=$top/root
mount -t overlay overlay -o "lowerdir=$root,upperdir=$top/upper,workdir=$top/work" "$R"
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
# hwloc reads the topology from sysfs; without it Open MPI warns on every rank.
mount --rbind /sys "$R/sys"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
cp "$shoal" "$R/usr/local/bin/shoal"
cp "$dev" "$R/usr/local/bin/shoal-dev"
mkdir -p "$R/tmp/c"
cp "$repo/examples/mpi/ring.c" "$repo/cmd/shoal-experiment/in.melt" "$R/tmp/c/"
# The agents run jobs unconfined: the host's cgroups are not the root's.
# Nothing in there reads this script: it is bash's standard input.
chr() { chroot "$R" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 SHOAL_CGROUPS=false "$@" </dev/null; }
# A node resolves its own name (Hydra's proxies connect back by it); the
# debootstrap root's /etc/hosts does not know this machine's.
printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" >"$R/etc/hosts"
echo "compat: $(chr sh -c '. /etc/os-release; echo "$PRETTY_NAME"'); $(chr mpirun.openmpi --version | head -1); $(chr mpiexec.mpich --version | sed -n 's/^ *Version: *//p' | sed 's/^/MPICH /'); $(chr dpkg-query -W -f 'lammps ${Version}' lammps)"
chr mpicc.mpich -O2 -o /tmp/c/ring-mpich /tmp/c/ring.c
chr mpicc.openmpi -O2 -o /tmp/c/ring-openmpi /tmp/c/ring.c
chr shoal-dev up -n 3 -dir /tmp/c/cluster -bin /usr/local/bin/shoal -base-port "$base"
api="SHOAL_ADDR=https://127.0.0.1:$((base + 2)) SHOAL_TOKEN_FILE=/tmp/c/cluster/token"
sh_() { chr sh -c "cd /tmp/c && $api $1"; }
failed=0
check() { # check NAME WANT OUTPUT: WANT (an extended regex) must be in OUTPUT
	if grep -Eq -- "$2" <<<"$3"; then echo "ok   $1"; else echo "FAIL $1: no /$2/ in:"; sed 's/^/     /' <<<"$3"; failed=1; fi
}
spread() { # spread NAME OUTPUT: ranks ran on every node, not only the head
	for n in node1 node2 node3; do
		grep -q "(shoal node $n)" <<<"$2" || { echo "FAIL $1: no rank on $n:"; sed 's/^/     /' <<<"$2"; failed=1; return; }
	done
	echo "ok   $1: ranks on node1, node2 and node3"
}
ringok='ring token ([0-9]+) \(want \1\), allreduce ([0-9]+) \(want \2\): ok'
lammpsok='Loop time of [0-9.e+-]+ on 3 procs for 100 steps'
lmp="lmp -in in.melt -var steps 100 -log none -nocite"
# Open MPI 5 ranks under daemons on different "nodes" of one machine (one
# hostname, shared addresses) do not reach each other over TCP, with or
# without shoal (mpirun with an rsh agent that runs each prted locally
# hangs alike), so its communicating runs take one node's three slots, still
# through shoal rsh (the node's name is not the host's), and its spread over
# three nodes is shown by a program that does not communicate.
where='echo "rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE (shoal node $SHOAL_NODE)"'
out=$(sh_ "shoal run -n 3 --ppn 1 --force --timeout 2m -- ./ring-mpich 3 2>&1" || true)
check "shoal run, MPICH ring" "$ringok" "$out"
spread "shoal run, MPICH ring" "$out"
out=$(sh_ "shoal run -n 3 --ppn 1 --force --timeout 2m --mpi openmpi -- sh -c '$where' 2>&1" || true)
spread "shoal run, Open MPI (mpirun through PRRTE)" "$out"
out=$(sh_ "shoal run -n 3 --ppn 3 --force --timeout 2m -- ./ring-openmpi 3 2>&1" || true)
check "shoal run, Open MPI ring" "$ringok" "$out"
out=$(sh_ "shoal run -n 3 --ppn 3 --force --timeout 3m -- $lmp 2>&1" || true)
check "shoal run, LAMMPS (Open MPI)" "$lammpsok" "$out"
# Batch steps find the allocation in the environment shoal sets; Open MPI
# 5 reads PRRTE's names for the hostfile, so without them its ranks would
# all start on the head.
cat >"$R/tmp/c/spread.sh" <<SCRIPT
#!/bin/sh
#SHOAL -n 3 --ppn 1 --force --timeout 3m
echo "hostfile: \$(tr '\\n' ' ' <"\$SHOAL_HOSTFILE")"
mpiexec.mpich ./ring-mpich 2 || exit 12
echo "open mpi step:"
mpirun.openmpi sh -c '$where' || exit 13
SCRIPT
cat >"$R/tmp/c/onenode.sh" <<SCRIPT
#!/bin/sh
#SHOAL -n 3 --ppn 3 --force --timeout 4m
mpirun.openmpi ./ring-openmpi 2 || exit 13
mpirun.openmpi $lmp || exit 14
echo "steps done"
SCRIPT
chmod 755 "$R/tmp/c/spread.sh" "$R/tmp/c/onenode.sh"
batch() { # batch SCRIPT: submit it, wait for its end, print its state and log
	local id state=
	id=$(sh_ "shoal submit $1")
	for _ in $(seq 400); do
		state=$(sh_ "shoal job --json $id" | grep -o '"state": "[a-z]*"' | head -1 | cut -d'"' -f4)
		case $state in done | failed | killed) break ;; esac
		sleep 1 # polling a job from a shell script: no event to wait on
	done
	echo "state: $state"
	sh_ "shoal logs $id 2>&1" || true
}
out=$(batch spread.sh)
check "batch job on three nodes ends done" "^state: done$" "$out"
mpich=$(sed -n '1,/^open mpi step:/p' <<<"$out")
ompi=$(sed -n '/^open mpi step:/,$p' <<<"$out")
check "batch step, MPICH ring" "$ringok" "$mpich"
spread "batch step, MPICH ring" "$mpich"
spread "batch step, Open MPI (PRRTE hostfile)" "$ompi"
out=$(batch onenode.sh)
check "batch job on one node ends done" "^state: done$" "$out"
check "batch step, Open MPI ring" "$ringok" "$out"
check "batch step, LAMMPS (Open MPI)" "$lammpsok" "$out"
chr shoal-dev down -dir /tmp/c/cluster
exit $failed
INNER
