# shoal — developer entry points. `make demo` and `make test` work on a fresh
# Debian machine: `make deps` installs what they need.

GO       ?= go
STATICCHECK_VERSION ?= v0.8.2
BIN      := bin
DEMO_DIR ?= .demo
DEMO_N   ?= 4
SHOAL    := $(BIN)/shoal
DEV      := $(BIN)/shoal-dev
# The demo's agents listen on 17946.. (3 ports each); node1's API is 17948.
# Absolute paths: the agents hand paths under their data dirs to jobs
# (SHOAL_AGENT_SOCK), which run elsewhere, and the printed environment
# must work from any directory.
DEMO_ABS := $(abspath $(DEMO_DIR))
DEMO_ENV := SHOAL_ADDR=https://127.0.0.1:17948 SHOAL_TOKEN_FILE=$(DEMO_ABS)/token

.PHONY: ui-screenshots ui-bench all build deps test test-short demo demo-stop bench bench-cluster bench-smoke lint leader-pure core-pure fuzz e2e experiment bench-peers deb deb-check deb-check-clean compat-trixie systemd-vm gpu-check clean

all: build

# shoal-exec, beside shoal, is what agents start jobs through: the job
# helper and MPI's remote shell (cmd/shoal-exec).
build:
	$(GO) build -o $(SHOAL) ./cmd/shoal
	$(GO) build -o $(BIN)/shoal-exec ./cmd/shoal-exec
	$(GO) build -o $(DEV) ./cmd/shoal-dev

# Debian packages the tests and the demo use; a no-op when all are there.
# systemd (systemd-analyze), man-db and zsh: make deb-check; prometheus:
# promtool, which the metrics tests run on the exposition; lammps: lmp, the
# real application make experiment runs besides examples/mpi/halo.c;
# python3-mpi4py: an MPI program that is not an ELF file (Debian's links
# Open MPI); chromium: the browser the dashboard's tests drive (agent/ui).
DEB_PKGS := mpich libmpich-dev openmpi-bin libopenmpi-dev iperf3 iproute2 iputils-ping util-linux gcc make tcpdump systemd man-db zsh prometheus lammps python3-mpi4py chromium
deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	$(GO) mod download

test: deps build
	$(GO) test -race -count=1 -timeout 30m ./...

test-short: build
	$(GO) test -count=1 -short ./...

demo: deps build demo-stop
	@$(DEV) up -n $(DEMO_N) -dir $(DEMO_ABS)
	@echo; echo '$$ shoal nodes'; $(DEMO_ENV) $(SHOAL) nodes
	@echo; echo '$$ shoal members'; $(DEMO_ENV) $(SHOAL) members
	@mpicc.mpich -O2 -o $(DEMO_ABS)/ring examples/mpi/ring.c
	@# --force: a busy laptop is often "overloaded" by seed 002's threshold, and
	@# the demo should run rather than recommend waiting.
	@echo; echo '$$ shoal run -n 8 -- ring 10   (MPICH, launched through shoal rsh)'
	@$(DEMO_ENV) $(SHOAL) run -n 8 --force -- $(DEMO_ABS)/ring 10
	@echo; echo '$$ shoal jobs'; $(DEMO_ENV) $(SHOAL) jobs
	@echo; echo "The cluster keeps running. Talk to it with:"
	@echo "  export $(DEMO_ENV)"
	@echo "  $(abspath $(SHOAL)) nodes --json"
	@echo; echo "Dashboard: https://127.0.0.1:17948/ui/  (log in with the token in $(DEMO_ABS)/token;"
	@echo "  the certificate is the cluster's own: trust '$(abspath $(SHOAL)) tls ca export' or accept it once)"
	@echo "Stop it with: make demo-stop"

# The dashboard's screenshots in docs/ui, taken by its browser test on a
# live three-agent cluster in headless Chromium.
ui-screenshots: deps
	SHOAL_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(GO) test -count=1 -run TestDashboard_InChromium ./agent/ui/

# One update of the network page's heatmaps at 1,000 nodes, in Chromium
# (docs/results.md).
ui-bench: deps
	$(GO) test -run '^$$' -bench HeatmapUpdate -benchtime 20x -count 3 ./agent/ui/

# Stops every agent running on a data dir of the demo's, found by its
# command line, whatever its PID (one restarted by hand included).
demo-stop:
	@if [ -d $(DEMO_ABS) ] && [ -x $(DEV) ]; then $(DEV) down -dir $(DEMO_ABS); fi

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200x ./placement/ ./probe/ ./probeplan/ ./gossip/ ./raftfsm/
	$(MAKE) bench-cluster

bench-cluster: build
	$(DEV) bench-gossip
	$(DEV) bench-idle
	$(DEV) bench-failover -runs 10

# Every benchmark the README and docs quote, once, at a small size, each
# under a deadline (-deadline: past it a run stops with exit status 3 and
# its goroutines' stacks), so that CI sees one that no longer ends, or no
# longer prints its table. About 2-3 minutes here; the figures mean
# nothing at these sizes. The namespace testbed's (vivaldi-error,
# shoal-experiment) need root and say so when skipped.
SMOKE_DIR := $(BIN)/bench-smoke
bench-smoke: deps build
	$(GO) build -o $(BIN)/shoal-experiment ./cmd/shoal-experiment
	rm -rf $(SMOKE_DIR) && mkdir -p $(SMOKE_DIR)
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 5m ./placement/ ./probe/ ./gossip/ ./raftfsm/
	$(GO) test -run '^$$' -bench HeatmapUpdate -benchtime 1x -timeout 3m ./agent/ui/
	$(DEV) bench-gossip -sizes 5 -rounds 3 -deadline 2m
	$(DEV) bench-idle -window 5s -deadline 2m
	$(DEV) bench-failover -runs 1 -deadline 3m
	$(DEV) bench-launch -runs 1 -sizes 4 -deadline 3m
	$(DEV) bench-scale -n 20 -members "" -rounds 3 -window 2s -jobs 2 -deadline 4m
	$(DEV) bench-scale -real -n 10 -rounds 3 -window 2s -jobs 2 -quiet-timeout 20s -deadline 3m
	@if [ "$$(id -u)" != 0 ]; then echo "bench-smoke: vivaldi-error and shoal-experiment skipped: the namespace testbed needs root"; else \
		set -e; \
		$(DEV) vivaldi-error -topology testbed/vivaldi6.json -settle 10s -snapshots 1 -every 1s -deadline 4m; \
		$(BIN)/shoal-experiment -shoal $(SHOAL) -cases peers9 -apps halo -np 2 -ppn 1 -reps 1 -cold-reps 0 -peer-reps 0 \
			-policies random,netload -bw-wait 15s -deadline 4m -out $(SMOKE_DIR)/experiment.csv; \
	fi

# End-to-end tests on the network-namespace testbed: real agents in
# namespaces, real MPI. Needs root; skips (one line per test) otherwise.
# TestRoles_TwentyProcesses (20 `shoal agent` processes on loopback) needs
# no root; SHOAL_ROLES_PROCS sets its size.
e2e: deps build
	SHOAL_E2E=1 SHOAL_BIN=$(CURDIR)/$(SHOAL) $(GO) test -count=1 -v -timeout 30m ./e2e/
	# The in-process servers/clients test at 20 agents (5 servers, 15 clients);
	# SHOAL_ROLES_AGENTS=10 for a smaller run.
	SHOAL_E2E=1 SHOAL_ROLES_AGENTS=$${SHOAL_ROLES_AGENTS:-20} $(GO) test -count=1 -v -timeout 20m -run TestTwentyAgentsServersAndClients ./agent/

# seed 002 §5 on the testbed cases (lab12, bulk10, asym10, degrade10; halo
# and LAMMPS): prints the tables, writes experiment.csv. Needs root.
# EXPERIMENT_CASES picks cases; EXPERIMENT_FLAGS passes more flags (see
# bin/shoal-experiment -h).
EXPERIMENT_CASES ?= lab12,bulk10,asym10,degrade10
experiment: deps build
	$(GO) build -o $(BIN)/shoal-experiment ./cmd/shoal-experiment
	$(BIN)/shoal-experiment -shoal $(SHOAL) -cases $(EXPERIMENT_CASES) -out experiment.csv $(EXPERIMENT_FLAGS)

# Slurm side by side with shoal on the namespace testbed (docs/design/experiment.md,
# "Against Slurm"): one table per case. Needs root; installs Debian's Slurm
# (slurm-wlm, 22.05) and munge, which only this bench uses. Every case, jobs
# back to back: about 45 minutes on a 2-core machine; PEERS_FLAGS for more
# or fewer repetitions (e.g. "-reps 2"), PEERS_CASES for fewer cases.
PEERS_PKGS  := slurm-wlm munge
PEERS_CASES ?= peers9,bulk10,lab12,asym10,degrade10,queue12
PEERS_FLAGS ?=
bench-peers: deps build
	@missing=""; for p in $(PEERS_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	$(GO) build -o $(BIN)/shoal-experiment ./cmd/shoal-experiment
	$(BIN)/shoal-experiment -shoal $(SHOAL) -cases $(PEERS_CASES) -apps lammps -np 3 -ppn 1 -reps 4 -cold-reps 1 \
		-policies random,slurm,slurm-tree,slurm-measured,netload,oracle -out bench-peers.csv $(PEERS_FLAGS)

# The leader core (leader/) stays pure: no network, file system, processes
# or unseeded randomness among its imports (leader/purity_test.go checks
# the same, and the wall clock).
LEADER_FORBIDDEN := net os syscall math/rand crypto/rand unsafe
leader-pure:
	@imports="$$($(GO) list -f '{{join .Imports " "}}' ./leader)" || exit 1; \
	test -n "$$imports" || { echo "leader purity: go list printed no imports"; exit 1; }; \
	bad=""; for imp in $$imports; do for f in $(LEADER_FORBIDDEN); do \
		case "$$imp" in "$$f"|"$$f"/*) bad="$$bad $$imp";; esac; done; done; \
	test -z "$$bad" || { echo "leader imports$$bad: the leader core must not do I/O; take what it needs through leader.View"; exit 1; }

# The pure core links no sampler, process runner or transport anywhere in
# its dependency graph (internal/purity's test checks the same list). net
# and syscall stay allowed: they come with the standard library and with
# raft's FSM interface.
CORE_PURE_PKGS := ./alloc ./leader ./netmodel ./placement ./raftfsm ./elastic ./probeplan ./nodestate ./vivaldi
CORE_IMPURE    := os/exec github.com/shirou/gopsutil github.com/hashicorp/memberlist github.com/shoal-hpc/shoal/probe github.com/shoal-hpc/shoal/gossip github.com/shoal-hpc/shoal/agent
core-pure:
	@for pkg in $(CORE_PURE_PKGS); do \
		deps="$$($(GO) list -deps $$pkg)" || exit 1; \
		test -n "$$deps" || { echo "core purity: go list -deps $$pkg printed nothing"; exit 1; }; \
		bad=""; for d in $$deps; do for f in $(CORE_IMPURE); do \
			case "$$d" in "$$f"|"$$f"/*) bad="$$bad $$d";; esac; done; done; \
		test -z "$$bad" || { echo "$$pkg links$$bad: the pure core takes samples and measurements as arguments; move the I/O to the agent"; exit 1; }; \
	done

lint: leader-pure core-pure
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...
	@test -x "$$($(GO) env GOPATH)/bin/staticcheck" || GOFLAGS= $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./gossip/
	$(GO) test -run '^$$' -fuzz FuzzStreamHeader -fuzztime 30s ./gossip/
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 30s ./raftfsm/
	$(GO) test -run '^$$' -fuzz FuzzApply -fuzztime 30s ./raftfsm/
	$(GO) test -run '^$$' -fuzz FuzzReadFrame -fuzztime 30s ./agent/replica/
	$(GO) test -run '^$$' -fuzz FuzzParseMIGMinors -fuzztime 30s ./agent/confine/

# Debian package: bin/shoal_VERSION_amd64.deb. nfpm is a Go module run at a
# pinned version, so the package needs nothing but the Go toolchain and the
# module proxy, and nfpm's dependencies stay out of shoal's go.mod. v2.45.2
# is the newest whose dependencies the proxy serves (later ones need
# go.digitalxero.dev modules for msix). The binary keeps cgo, as `make
# build`, so os/user resolves LDAP/sssd users through NSS.
NFPM_VERSION ?= v2.45.2
DEB_VERSION  ?= $(shell git log -1 --date=format:%Y%m%d --format=0.0~git%cd.%h 2>/dev/null || echo 0.0~dev)
# packaging/nfpm.yaml reads the files from bin/pkg.
PKG_DIR      := bin/pkg
deb:
	rm -rf $(PKG_DIR) $(BIN)/shoal_*.deb && mkdir -p $(PKG_DIR)
	$(GO) build -trimpath -ldflags "-s -w -X main.version=$(DEB_VERSION)" -o $(PKG_DIR)/shoal ./cmd/shoal
	$(GO) build -trimpath -ldflags "-s -w" -o $(PKG_DIR)/shoal-exec ./cmd/shoal-exec
	$(PKG_DIR)/shoal gen man $(PKG_DIR)
	gzip -9n $(PKG_DIR)/shoal.1 $(PKG_DIR)/shoal.hcl.5
	$(PKG_DIR)/shoal gen completion bash > $(PKG_DIR)/shoal.bash
	$(PKG_DIR)/shoal gen completion zsh > $(PKG_DIR)/_shoal
	SHOAL_DEB_VERSION=$(DEB_VERSION) GOFLAGS= \
		$(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION) package \
		--config packaging/nfpm.yaml --packager deb --target $(BIN)/
	@ls -l $(BIN)/shoal_*.deb

# Installs the package into a throwaway copy of this Debian system (an
# overlay in a private mount namespace, then chroot), checks files, modes,
# the unit (systemd-analyze verify), man pages, completion, --validate, and
# that purge leaves only the data dir. Needs root; skips otherwise.
deb-check: deps deb
	bash packaging/debcheck.sh $(BIN)/shoal_*.deb

# deb-check on a truly clean Debian root instead of this machine's: a
# debootstrap minbase (plus systemd, man-db, bash-completion and zsh for the
# checks) made once from the Debian mirror and cached in DEBROOT. Needs
# root, debootstrap and the network the first time; not part of CI.
DEBROOT ?= /var/cache/shoal-debcheck/bookworm
deb-check-clean: deb
	bash packaging/debroot.sh $(DEBROOT)
	DEBCHECK_ROOT=$(DEBROOT) bash packaging/debcheck.sh $(BIN)/shoal_*.deb

# MPI jobs through shoal on Debian 13 (trixie: Open MPI 5 on PRRTE, MPICH
# 4.2, LAMMPS): an MPICH ring, an Open MPI ring and LAMMPS through shoal
# run and through a batch script's steps, on three agents in a chroot of a
# debootstrap root made once in COMPATROOT (about 1.6 GB; 6 minutes the
# first time here), then about a minute per run. Needs root, debootstrap
# and the Debian mirror the first time; not part of make test.
COMPATROOT ?= /var/cache/shoal-compat/trixie
COMPAT_PKGS := openmpi-bin libopenmpi-dev mpich libmpich-dev lammps gcc libc6-dev procps
compat-trixie: build
	DEBROOT_SUITE=trixie DEBROOT_PACKAGES="$(COMPAT_PKGS)" bash packaging/debroot.sh $(COMPATROOT)
	bash packaging/compat.sh $(COMPATROOT) $(SHOAL) $(DEV)

# The package under systemd as PID 1 on a pure cgroup v2 host: a Debian 13
# root with its kernel (made once in SYSTEMDVM_ROOT) booted in a KVM virtual
# machine that installs the .deb and checks readiness, the watchdog, the
# delegated cgroup, an OOM-killed --mem job and a restart under a running
# job. Needs root, qemu-system-x86 and /dev/kvm (SYSTEMDVM_ACCEL=tcg: no
# KVM, slow); not part of make test.
SYSTEMDVM_ROOT ?= /var/cache/shoal-vm/trixie
SYSTEMDVM_PKGS := linux-image-amd64 systemd-sysv udev procps util-linux kmod iproute2 ifupdown
systemd-vm: deb
	DEBROOT_SUITE=trixie DEBROOT_PACKAGES="$(SYSTEMDVM_PKGS)" bash packaging/debroot.sh $(SYSTEMDVM_ROOT)
	bash packaging/systemdvm.sh $(SYSTEMDVM_ROOT) $(BIN)/shoal_*.deb

# GPU inventory and binding on a real NVIDIA host with two GPUs (or MIG
# instances) or more: one agent, whose inventory must come from NVML and
# count what nvidia-smi shows, then two --pe gpu:1 jobs at once, each
# handed one device and not the other's
# (CUDA_VISIBLE_DEVICES, nvidia-smi -L, which /dev/nvidiaN it can open
# under the cgroup device rules); on a MIG node, the capability nodes each
# instance is allowed, and that each job opens its own instance's only.
# Prints "no GPU here: skipped" and exits 0 elsewhere; not part of make
# test or CI.
gpu-check: build
	bash packaging/gpucheck.sh $(SHOAL) $(DEV)

clean: demo-stop
	rm -rf $(BIN) $(DEMO_DIR)
