#!/usr/bin/env bash
# The Debian packages `make test` needs, in one place. `make test` (its
# `deps` target) and .ci/run both call it.
#
#   ci/deps.sh               install what is missing (as root), else say what
#                            will be skipped; never fails for a missing package
#   ci/deps.sh need PKG WHAT exit 0 when PKG is installed; else print one SKIP
#                            line for WHAT, append it to $CHRONOSYNC_SKIP_LOG
#                            (make test sets it) and exit 1
#   ci/deps.sh report FILE   print the skip list FILE holds (make test's last step)
#
# Environment:
#   CHRONOSYNC_NO_INSTALL=1     never install, even as root: what is missing is skipped
#   CHRONOSYNC_PRETEND_MISSING  packages, separated by spaces, to treat as missing
#                               although installed (never installed, always skipped):
#                               tries the skip path without uninstalling anything.
#                               The Go tests' helper (ci/needs) reads it too.
#
# When everything is present this is one dpkg-query: a few milliseconds.
set -euo pipefail

# The packages, each with what needs it. Later issues that add a system
# package (OpenMPI, for one) add it here, and guard what uses it with
# `ci/deps.sh need` (make, shell) or ci/needs (Go tests).
PACKAGES=(
	protobuf-compiler  # protoc: make proto-check
	libhsa-runtime-dev # hsa/hsa.h and libhsa-runtime64: lint and tests of -tags rocm (real/rocm)
	chrony             # chronyd: the reference daemons of peers/
	linuxptp           # ptp4l: the reference daemons of peers/
	iproute2           # ip, tc: namespaces in the tests of peers/, real/tsudp, cmd/chronosync
	libopenmpi-dev     # mpi.h and libmpi (pkg-config ompi-c): build, lint and tests of -tags mpi (mpi, phasegap)
	openmpi-bin        # mpirun: the tests of -tags mpi launch their ranks with it
	pkgconf            # pkg-config: cgo finds OpenMPI's flags with it (#cgo pkg-config: ompi-c)
	chromium           # headless browser: the report's browser test (report/browser_test.go, chromedp) and make report-shots
)

# The default pid file of the host chronyd that installing chrony may start.
CHRONY_PIDFILE=/run/chrony/chronyd.pid
# Debian's hook that invoke-rc.d and deb-systemd-invoke ask before a
# maintainer script starts a service; exit status 101 means "forbidden".
POLICY_RC_D=/usr/sbin/policy-rc.d
POLICY_MARK="written by chronosync's ci/deps.sh"

log() { echo "deps: $*" >&2; }

# pretended PKG: PKG is listed in $CHRONOSYNC_PRETEND_MISSING.
pretended() {
	local p pretend
	read -ra pretend <<<"${CHRONOSYNC_PRETEND_MISSING:-}"
	for p in "${pretend[@]}"; do
		[[ $p == "$1" ]] && return 0
	done
	return 1
}

# missing PKG...: print, one a line, the packages of PKG... that are not
# installed (dpkg's "ii" state) or are pretended missing. One dpkg-query for
# all of them: it is what keeps this script cheap when nothing is missing.
missing() {
	local -A installed=()
	local pkg state
	if command -v dpkg-query >/dev/null 2>&1; then
		# dpkg-query exits 1 and complains on stderr about a package it has
		# never heard of: that package is simply not installed.
		while read -r pkg state; do
			[[ $state == ii ]] && installed[$pkg]=1
		done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "$@" 2>/dev/null || true)
	else
		# Not Debian: we cannot tell, so we assume present and let whatever
		# uses the package fail with its own message.
		for pkg in "$@"; do installed[$pkg]=1; done
	fi
	for pkg in "$@"; do
		if [[ -z ${installed[$pkg]:-} ]] || pretended "$pkg"; then
			echo "$pkg"
		fi
	done
}

# skip_line WHAT PKG: the one line that says WHAT is skipped and how to get PKG.
skip_line() {
	echo "SKIP $1: needs package $2: apt-get install $2"
}

# need PKG WHAT: see the header.
need() {
	local pkg=$1 what=$2 line
	if [[ -z $(missing "$pkg") ]]; then
		return 0
	fi
	line=$(skip_line "$what" "$pkg")
	echo "$line"
	if [[ -n ${CHRONOSYNC_SKIP_LOG:-} ]]; then
		echo "$line" >>"$CHRONOSYNC_SKIP_LOG"
	fi
	return 1
}

# report FILE: the skip list make test ends with. Lines from Go tests start
# with the package directory (ci/needs writes the absolute path): it is
# shown relative to the current directory, the repository's root.
report() {
	local file=$1
	if [[ ! -s $file ]]; then
		echo "make test: nothing skipped"
		return 0
	fi
	echo "make test: skipped (install the packages as named, or run make test as root, to run them):"
	local line
	while IFS= read -r line; do
		echo "  ${line/"$PWD"\//}"
	done <"$file" | sort -u
}

# deny_starts: install a policy-rc.d that forbids every service start, so
# that installing chrony does not start a chronyd on the host (it would
# steer the host clock under the tests, which run their own chronyd in
# namespaces). An existing policy-rc.d belongs to the administrator (Docker
# images ship one that denies everything): it is left as it is. Ours is
# removed when this script exits.
deny_starts() {
	[[ -e $POLICY_RC_D ]] && return 0
	printf '#!/bin/sh\n# %s for the length of one apt-get install:\n# no service starts.\nexit 101\n' \
		"$POLICY_MARK" >"$POLICY_RC_D"
	chmod 755 "$POLICY_RC_D"
	trap 'allow_starts' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

# allow_starts: remove the policy-rc.d of deny_starts, and only that one.
allow_starts() {
	if grep -qF "$POLICY_MARK" "$POLICY_RC_D" 2>/dev/null; then
		rm -f "$POLICY_RC_D"
	fi
}

# stop_host_chronyd: in case a chronyd started anyway (an administrator's
# policy-rc.d that allows it), stop the host daemon of the chrony we just
# installed: by its unit where systemd runs (and keep it from starting at
# boot), else by its pid file after checking that the pid is a chronyd.
# Never by process name: that would also end the chronyd of a test, or one
# that is not ours.
stop_host_chronyd() {
	local pid comm
	if [[ -d /run/systemd/system ]]; then
		systemctl stop chrony.service 2>/dev/null || true
		systemctl disable --quiet chrony.service 2>/dev/null || true
		return 0
	fi
	[[ -r $CHRONY_PIDFILE ]] || return 0
	pid=$(<"$CHRONY_PIDFILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
	if [[ $comm == chronyd ]]; then
		log "stopping the host chronyd that installing chrony started (pid $pid, from $CHRONY_PIDFILE)"
		kill "$pid" || true
	fi
}

# install PKG...: apt-get update once, then install PKG... without starting
# any service. Fails (non-zero) if apt-get does.
install() {
	log "installing $*"
	deny_starts
	# apt-get update only now that something is missing: it is the slow part.
	apt-get update -qq || return 1
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" || return 1
	local pkg
	for pkg in "$@"; do
		[[ $pkg == chrony ]] && stop_host_chronyd
	done
	allow_starts
	log "installed $*"
	return 0
}

# ensure: install what is missing when we may; otherwise, or if that fails,
# say what the tests will skip. Never fails for a missing package.
ensure() {
	local -a want=() absent=() still=()
	local pkg why=""
	mapfile -t absent < <(missing "${PACKAGES[@]}")
	if ((${#absent[@]} == 0)); then
		return 0
	fi
	# Pretended packages are never installed: they are there to be skipped.
	for pkg in "${absent[@]}"; do
		pretended "$pkg" || want+=("$pkg")
	done
	if ((${#want[@]} == 0)); then
		why="CHRONOSYNC_PRETEND_MISSING"
	else
		if [[ ${CHRONOSYNC_NO_INSTALL:-} == 1 ]]; then
			why="CHRONOSYNC_NO_INSTALL=1"
		elif ((EUID != 0)); then
			why="not root"
		elif ! command -v apt-get >/dev/null 2>&1; then
			why="no apt-get"
		elif ! install "${want[@]}"; then
			why="apt-get failed"
		fi
	fi
	mapfile -t still < <(missing "${PACKAGES[@]}")
	if ((${#still[@]} > 0)); then
		log "missing: ${still[*]} (${why:-pretended}); what needs them is skipped and listed at the end"
		log "to install them: apt-get install --no-install-recommends ${still[*]}"
	fi
}

case "${1:-}" in
"") ensure ;;
need)
	[[ $# -eq 3 ]] || { log "usage: $0 need PKG WHAT"; exit 2; }
	need "$2" "$3"
	;;
report)
	[[ $# -eq 2 ]] || { log "usage: $0 report FILE"; exit 2; }
	report "$2"
	;;
*)
	log "usage: $0 [need PKG WHAT | report FILE]"
	exit 2
	;;
esac
