#!/usr/bin/env bash
# gpucheck.sh SHOAL SHOAL_DEV: checks GPU binding on a real NVIDIA GPU host.
# One agent on loopback (ports from GPUCHECK_PORT, default 17990). First
# what the agent's inventory found: it must have asked NVML (not fallen
# back to nvidia-smi) and found as many schedulable devices as nvidia-smi
# shows: each GPU, or the MIG instances of a GPU in MIG mode. Then two
# `--pe gpu:1 --mpi none` jobs that hold their device at once and print
# CUDA_VISIBLE_DEVICES (an index, or a UUID on a node with MIG instances),
# `nvidia-smi -L` and which /dev/nvidiaN they can open. Each must be
# handed one device, not the other's; where the agent applies cgroup
# device rules (its log says so at start) each must open its own device
# node only. On a node with MIG instances it first prints, per instance,
# the capability nodes the device rules allow it (its GPU instance's and
# compute instance's, from the driver's mig-minors table), and checks
# that each job opens its own instance's and not the other's. A machine
# without an NVIDIA GPU prints "no GPU here: skipped" and exits 0. Needs root (the agent confines jobs in cgroups);
# the agent and its data stop and go at the end, on failure too.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: gpucheck.sh SHOAL SHOAL_DEV (got $# arguments)" >&2; exit 2; }
shoal=$(readlink -f "$1")
dev=$(readlink -f "$2")
[ -x "$shoal" ] && [ -x "$dev" ] || { echo "gpucheck: no $1 or $2: run 'make build' first" >&2; exit 2; }
gpus=0 migs=0 whole=0
if command -v nvidia-smi >/dev/null; then
	gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
	# Schedulable devices as shoal counts them: the GPUs not in MIG mode,
	# and the MIG instances of those that are.
	migs=$(nvidia-smi -L 2>/dev/null | grep -c '^ *MIG ' || true)
	whole=$(nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null | grep -vc '^Enabled' || true)
fi
if [ "$gpus" -eq 0 ]; then
	echo "no GPU here: skipped"
	exit 0
fi
devices=$((whole + migs))
if [ "$devices" -lt 2 ]; then
	echo "one schedulable GPU here ($gpus GPUs, $migs MIG instances): two jobs cannot hold one each: skipped"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "gpucheck: needs root: the agent binds GPUs through the jobs' cgroups" >&2
	exit 2
fi
echo "gpucheck: $gpus NVIDIA GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | xargs); $migs MIG instances; $devices schedulable devices"
# Per MIG instance, the nodes a job given it may open: its GPU's
# /dev/nvidiaN and the capability nodes of its GPU instance and compute
# instance, which the driver names gpuMINOR/giG/access and
# gpuMINOR/giG/ciC/access in mig-minors. The agent's own view follows in
# its log ("GPUs bound by cgroup device rules").
mig_minors=/proc/driver/nvidia-caps/mig-minors
if [ "$migs" -gt 0 ]; then
	echo "MIG instances and the nodes the device rules allow each (GPU index, GPU instance, compute instance):"
	# nvidia-smi mig -lci: | GPU  GI-ID  Name (two words)  Profile-ID  CI-ID  Placement |
	nvidia-smi mig -lci 2>/dev/null | awk '$1 == "|" && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $2, $3, $7, $4 " " $5 }' |
		while read -r gpu gi ci name; do
			minor=$(nvidia-smi -q -i "$gpu" | sed -n 's/^ *Minor Number *: *\([0-9]*\).*/\1/p' | head -1)
			line="     GPU $gpu GI $gi CI $ci ($name): /dev/nvidia$minor"
			for cap in "gpu$minor/gi$gi/access" "gpu$minor/gi$gi/ci$ci/access"; do
				m=$(awk -v c="$cap" '$1 == c { print $2 }' "$mig_minors" 2>/dev/null)
				node=/dev/nvidia-caps/nvidia-cap$m
				if [ -z "$m" ]; then
					line+=", $cap: not in $mig_minors"
				elif [ -c "$node" ]; then
					line+=", $node ($cap, c $(printf '%d:%d' "0x$(stat -c %t "$node")" "0x$(stat -c %T "$node")"))"
				else
					line+=", $node ($cap): no such node"
				fi
			done
			echo "$line"
		done
fi

base=${GPUCHECK_PORT:-17990}
dir=$(mktemp -d /tmp/shoal-gpucheck.XXXXXX)
cleanup() {
	"$dev" down -dir "$dir/cluster" >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT
"$dev" up -n 1 -dir "$dir/cluster" -bin "$shoal" -base-port "$base"
export SHOAL_ADDR=https://127.0.0.1:$((base + 2)) SHOAL_TOKEN_FILE=$dir/cluster/token
failed=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failed=1; }

# What the inventory found, and through what: the agent logs one line.
found=$(grep -hs 'NVIDIA GPUs found through\|no NVIDIA GPUs\|NVML failed' "$dir"/cluster/*.log | sed 's/^time=[^ ]* //' || true)
echo "agent's inventory: ${found:-no NVIDIA line in its log}"
"$shoal" nodes | sed 's/^/     /' # the PES column: the devices by model
n=$(sed -n 's/.*NVIDIA GPUs found through NVML.* devices=\([0-9]*\).*/\1/p' <<<"$found" | head -1)
if [ -z "$n" ]; then
	fail "the agent did not list its GPUs through NVML (libnvidia-ml.so.1 present: $(ldconfig -p | grep -c 'libnvidia-ml.so.1' || true))"
elif [ "$n" -ne "$devices" ]; then
	fail "NVML lists $n schedulable devices, nvidia-smi $devices ($gpus GPUs, $migs MIG instances)"
else
	ok "NVML lists $n schedulable devices, as nvidia-smi does"
fi

# Each job prints what it was given, then waits for the other to have
# printed too (both hold their GPU at once), up to a minute.
cat >"$dir/job.sh" <<'JOB'
#!/bin/sh
echo "cuda_visible_devices=$CUDA_VISIBLE_DEVICES"
nvidia-smi -L 2>&1 | sed 's/^/nvidia-smi: /'
for d in /dev/nvidia[0-9]* /dev/nvidia-caps/nvidia-cap*; do
	[ -e "$d" ] || continue
	if (: <"$d") 2>/dev/null; then echo "opens $d"; else echo "refused $d"; fi
done
touch "ready.$SHOAL_JOB_ID"
for _ in $(seq 600); do
	[ "$(ls ready.* | wc -l)" -ge 2 ] && exit 0
	sleep 0.1 # the other job's file: no event to wait on from a shell
done
echo "the other job never ran beside this one"
exit 1
JOB
chmod 755 "$dir/job.sh"
ids=()
for _ in 1 2; do
	ids+=("$("$shoal" submit -n 1 --pe gpu:1 --mpi none --force --workdir "$dir" -- "$dir/job.sh")")
done
declare -A out
for id in "${ids[@]}"; do
	state=
	for _ in $(seq 180); do
		state=$("$shoal" job --json "$id" | grep -o '"state": "[a-z]*"' | head -1 | cut -d'"' -f4)
		case $state in done | failed | killed) break ;; esac
		sleep 1 # polling a job from a shell script: no event to wait on
	done
	out[$id]=$("$shoal" logs "$id" 2>&1 || true)
	echo "job $id ($state):"
	sed 's/^/     /' <<<"${out[$id]}"
	[ "$state" = done ] && ok "job $id ran beside the other and ended done" || fail "job $id ended $state"
done
a=${out[${ids[0]}]}
b=${out[${ids[1]}]}
va=$(sed -n 's/^cuda_visible_devices=//p' <<<"$a")
vb=$(sed -n 's/^cuda_visible_devices=//p' <<<"$b")
one='^([0-9]+|GPU-[0-9a-f-]+|MIG-[0-9a-f-]+)$' # an index, or a UUID where the node has MIG instances
if [[ $va =~ $one && $vb =~ $one && $va != "$vb" ]]; then
	ok "CUDA_VISIBLE_DEVICES: $va and $vb, one device each"
else
	fail "CUDA_VISIBLE_DEVICES: '$va' and '$vb', want one distinct device each"
fi
oa=$(grep '^opens /dev/nvidia[0-9]' <<<"$a" || true)
ob=$(grep '^opens /dev/nvidia[0-9]' <<<"$b" || true)
if grep -qs "GPUs bound by cgroup device rules" "$dir"/cluster/*.log; then
	# Two MIG instances of one GPU both open that GPU's node.
	if [ -n "$oa" ] && [ -n "$ob" ] && [ "$(wc -l <<<"$oa")" = 1 ] && [ "$(wc -l <<<"$ob")" = 1 ] &&
		{ [ "$oa" != "$ob" ] || [[ $va == MIG-* && $vb == MIG-* ]]; }; then
		ok "device rules: the jobs open ${oa#opens } and ${ob#opens } only"
	else
		fail "device rules: the jobs open [$oa] and [$ob], want one distinct device node each"
	fi
else
	echo "note: the agent binds GPUs by environment only here ($(grep -hs 'GPUs bound by environment' "$dir"/cluster/*.log | sed 's/.*msg="\([^"]*\)".*/\1/' | head -1)): device nodes not checked"
fi
if [ "$migs" -gt 0 ] && grep -qs "GPUs bound by cgroup device rules" "$dir"/cluster/*.log; then
	# Each job given a MIG instance opens its GPU instance's and compute
	# instance's capability nodes; two instances share at most their GPU
	# instance's (two compute instances of one GPU instance).
	ca=$(grep '^opens /dev/nvidia-caps/' <<<"$a" | sort || true)
	cb=$(grep '^opens /dev/nvidia-caps/' <<<"$b" | sort || true)
	na=$(grep -c . <<<"$ca" || true)
	nb=$(grep -c . <<<"$cb" || true)
	shared=$(comm -12 <(echo "$ca") <(echo "$cb") | grep -c . || true)
	if [[ $va == MIG-* && $na -ne 2 ]] || [[ $vb == MIG-* && $nb -ne 2 ]] || [ "$shared" -gt 1 ]; then
		fail "MIG capability nodes: the jobs open [$ca] and [$cb], want their own instance's two each"
	else
		ok "MIG capability nodes: the jobs open $na and $nb, $shared of them shared"
	fi
fi
la=$(grep -c '^nvidia-smi: GPU ' <<<"$a" || true)
lb=$(grep -c '^nvidia-smi: GPU ' <<<"$b" || true)
echo "note: nvidia-smi -L lists $la and $lb GPUs in the two jobs (NVML reads no CUDA_VISIBLE_DEVICES; under device rules it cannot open the others)"
exit $failed
