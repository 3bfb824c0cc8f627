#!/bin/bash
# Runs every test of keyrouter and ends with one line "N passed, N failed".
#   C test programs in build/tests/ (TAP on stdout), then the bats files in tests/bats/.
# Each program's TAP must be whole: a program that crashes, exits non-zero without
# reporting a failure, prints no plan, or whose plan (1..N) disagrees with the results it
# printed (it stopped early, or printed a point twice) counts as one failure more.
# Timeouts: a C program runs at most KR_TEST_TIMEOUT seconds (default 900), one bats test
# at most BATS_TEST_TIMEOUT (default 1200) and a bats file at most KR_BATS_FILE_TIMEOUT
# (default 3600); a hang becomes one failure naming the program or the test.
# Each program's and bats file's summary line ends with its wall-clock seconds (make test
# aims at 10 minutes in all: the slow ones are seen), and every skipped test is named.
# TESTS=pattern runs only the programs / bats files whose name matches; KR_BATS_DIR (default
# tests/bats) is where the bats files are.
# Background: the bats files named in KR_BATS_BACKGROUND (default: fuzz sanitizers valgrind)
# are CPU work only -- their own builds, fuzzing, sanitized and valgrind runs; no network
# namespace, no pin, no interface, no package, no timing bound.  They run one after the other
# in the background at the lowest priority (nice 19) from the start, while the C programs and
# the other bats files (which mostly wait on packets and processes, leaving a core idle) run
# in the foreground; their results are reported after the others'.  Before them, the
# background builds what one foreground file needs and would otherwise build itself: the
# Debian package (deb.bats, from the same tree; KR_DEB_PREBUILT tells it where) and the QUIC
# server (tests/lib/quic_server_build.sh, cached and locked: the QUIC files find it built).
# KR_BATS_BACKGROUND= (empty) runs everything in the foreground, in order, as before.
# Side lane: the bats files named in KR_BATS_SIDE (default: soak e2e_bgp) last as long as the
# clock says, not as the CPU makes them -- a soak runs real traffic for minutes, the BGP test
# waits on BIRD's timers; both mostly wait.  They run one after the other beside the
# foreground, at the normal priority, from the start; their results are reported after the
# foreground's.  They assert bounds on lost queries and leaks, and the BGP test's BIRD runs
# at a real-time priority (its 100 ms BFD), so sharing the machine costs them little but
# wall-clock time they would spend waiting anyway.  KR_BATS_SIDE= (empty) runs them in the
# foreground.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-build}
pat=${TESTS:-}
bats_dir=${KR_BATS_DIR:-tests/bats}
prog_timeout=${KR_TEST_TIMEOUT:-900}
file_timeout=${KR_BATS_FILE_TIMEOUT:-3600}
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-1200}
log=$(mktemp -d /tmp/kr-test.XXXXXX)
# the background (below) is a process group of its own: stopped with the script
trap '[ -z "${bg_pid:-}" ] || kill -- -"$bg_pid" 2>/dev/null
      [ -z "${side_pid:-}" ] || kill -- -"$side_pid" 2>/dev/null; rm -rf "$log"' EXIT
trap 'exit 130' INT TERM
passed=0 failed=0 skipped=0

count() { # file -> updates counters; sets $f to its failures (no subshell: the
	  # counters must survive)
	local p s
	p=$(grep -cE '^ok ' "$1")
	s=$(grep -cE '^ok .*# ?(skip|SKIP)' "$1")
	f=$(grep -cE '^not ok ' "$1")
	passed=$((passed + p - s)); skipped=$((skipped + s)); failed=$((failed + f))
}

# skips FILE NAME: name each skipped test (and why), so that a skip is seen, not only counted.
skips() {
	grep -E '^ok .*# ?(skip|SKIP)' "$1" | sed "s|^|# skipped in $2: |"
}

# plan_check FILE NAME: the TAP plan must exist once and equal the number of results.
plan_check() {
	local plans n results
	plans=$(grep -cE '^1\.\.[0-9]+' "$1")
	results=$(grep -cE '^(not )?ok ' "$1")
	if [ "$plans" != 1 ]; then
		echo "not ok - $2: $plans TAP plans (1..N) for $results results"
		failed=$((failed + 1))
		return
	fi
	n=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$1")
	if [ "$n" != "$results" ]; then
		echo "not ok - $2: plan 1..$n but $results results"
		failed=$((failed + 1))
	fi
}

# timed_out RC: did `timeout` stop the command (124, or 137 after -k)?
timed_out() { [ "$1" = 124 ] || [ "$1" = 137 ]; }

# verdict NAME TAP STATUS LIMIT [tail]: counts TAP's results; a timeout (after LIMIT s), an
# exit status without a failure, or a plan that disagrees is one failure more, naming NAME;
# skipped tests are named.  "tail": the TAP's last lines go with an exit status.
verdict() {
	count "$2"
	if timed_out "$3"; then
		echo "not ok - $1 timed out after ${4}s"
		failed=$((failed + 1))
	elif [ "$3" != 0 ] && [ "$f" = 0 ]; then
		echo "not ok - $1 exited with status $3"
		[ -z "${5:-}" ] || tail -20 "$2"
		failed=$((failed + 1))
	elif [ "$f" = 0 ]; then
		plan_check "$2" "$1"
	fi
	skips "$2" "$1"
}

# run_bats FILE: the bats file's TAP in $log/bats-NAME.tap; "STATUS SECONDS" in .done.
# The background runs it with bg_nice=(nice -n 19).
bg_nice=()
run_bats() {
	local name start rc
	name=$(basename "$1" .bats)
	start=$SECONDS
	timeout -k 10 "$file_timeout" ${bg_nice[@]+"${bg_nice[@]}"} bats --tap "$1" \
		> "$log/bats-$name.tap" 2>&1
	rc=$?
	echo "$rc $((SECONDS - start))" > "$log/bats-$name.done"
}

# report_bats NAME: counts and prints what run_bats NAME left.
report_bats() {
	local name=$1 rc secs
	read -r rc secs < "$log/bats-$name.done"
	grep -E '^(not ok|#)' "$log/bats-$name.tap" | awk 'NR <= 200'
	verdict "bats $name" "$log/bats-$name.tap" "$rc" "$file_timeout" tail
	echo "# bats $name: $(grep -cE '^ok ' "$log/bats-$name.tap") ok, $f not ok ($secs s)"
}

selected() { [ -z "$pat" ] || [[ "$1" == *$pat* ]]; }

fg=() bg=() side=()
if ls "$bats_dir"/*.bats >/dev/null 2>&1; then
	for b in "$bats_dir"/*.bats; do
		name=$(basename "$b" .bats)
		selected "$name" || continue
		if [[ " ${KR_BATS_BACKGROUND-fuzz sanitizers valgrind} " == *" $name "* ]]; then
			bg+=("$b")
		elif [[ " ${KR_BATS_SIDE-soak e2e_bgp} " == *" $name "* ]]; then
			side+=("$b")
		else
			fg+=("$b")
		fi
	done
fi
# in_fg NAME: does the bats file NAME run in the foreground here?
in_fg() { [[ " ${fg[*]-} " == *" $bats_dir/$1.bats "* ]]; }

# What the background builds first, for a foreground file (only one that runs here).
prebuild_deb= prebuild_quic=
if [ ${#bg[@]} -gt 0 ] && [ "$bats_dir" = tests/bats ]; then
	if in_fg deb && ! dpkg-query -W -f='${Status}' keyrouter 2>/dev/null | grep -q 'ok installed'; then
		prebuild_deb=$OUT/deb-prebuilt
		mkdir -p "$prebuild_deb"
		rm -f "$prebuild_deb.status"
		# locked from now until the package is built: deb.bats waits for it
		exec 8>"$prebuild_deb.lock"
		flock 8
		export KR_DEB_PREBUILT=$prebuild_deb
	fi
	# the files that build it (into build/, locked and cached by the script)
	if [ "$OUT" = build ] && { in_fg e2e_quic_lb || in_fg quic_lb_server; }; then
		prebuild_quic=1
	fi
fi
bg_pid=
if [ ${#bg[@]} -gt 0 ]; then
	set -m	# a process group of its own: reniced and stopped as one
	(
		set +m	# inside, an ordinary script again (bats' watchdogs rely on it)
		# the builds at the normal priority: a foreground file may be waiting for them
		if [ -n "$prebuild_deb" ]; then
			OUT=$prebuild_deb timeout -k 10 "$file_timeout" scripts/deb.sh \
				> "$prebuild_deb.log" 2>&1 8>&-
			echo $? > "$prebuild_deb.status"
			exec 8>&-
		fi
		[ -z "$prebuild_quic" ] || timeout -k 10 "$file_timeout" \
			tests/lib/quic_server_build.sh > "$log/quic_server_build.log" 2>&1
		# the files at nice 19 while the foreground runs, then at the normal priority
		for b in "${bg[@]}"; do
			if [ -e "$log/foreground.done" ]; then bg_nice=(); else bg_nice=(nice -n 19); fi
			run_bats "$b"
		done
	) &
	bg_pid=$!
	set +m
	[ -z "$prebuild_deb" ] || exec 8>&-
fi

side_pid=
if [ ${#side[@]} -gt 0 ]; then
	set -m	# a process group of its own: stopped with the script
	(
		set +m
		for b in "${side[@]}"; do run_bats "$b"; done
	) &
	side_pid=$!
	set +m
fi

for t in "$OUT"/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	case "$t" in *.d) continue;; esac
	name=$(basename "$t")
	[ -n "$pat" ] && [[ "$name" != *$pat* ]] && continue
	echo "# == $name"
	start=$SECONDS
	timeout -k 10 "$prog_timeout" "$t" 2>&1 | tee "$log/$name.tap" |
		grep -E '^(not ok|# )' | grep -v '^# ok' | awk 'NR <= 200'
	rc=${PIPESTATUS[0]}
	verdict "$name" "$log/$name.tap" "$rc" "$prog_timeout"
	echo "# $name: $(grep -cE '^ok ' "$log/$name.tap") ok, $f not ok ($((SECONDS - start)) s)"
done

for b in ${fg[@]+"${fg[@]}"}; do
	name=$(basename "$b" .bats)
	echo "# == bats $name"
	run_bats "$b"
	report_bats "$name"
done
if [ -n "$side_pid" ]; then
	wait "$side_pid"
	side_pid=
	for b in "${side[@]}"; do
		name=$(basename "$b" .bats)
		echo "# == bats $name (beside the foreground)"
		report_bats "$name"
	done
fi
if [ -n "$bg_pid" ]; then
	touch "$log/foreground.done"
	renice "$(nice)" -g "$bg_pid" >/dev/null 2>&1
	wait "$bg_pid"
	bg_pid=
	for b in "${bg[@]}"; do
		name=$(basename "$b" .bats)
		echo "# == bats $name (in the background)"
		report_bats "$name"
	done
fi

[ "$skipped" -gt 0 ] && echo "# $skipped skipped"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
