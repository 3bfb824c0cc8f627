#!/bin/bash
# `make fuzz DURATION=SECONDS`: every libFuzzer harness (tests/fuzz/fuzz_*.c, ASan+UBSan)
# for DURATION seconds each (default 60), starting from the seeds in
# tests/fuzz/corpus/<harness>/ plus what earlier runs found ($OUT/libfuzzer/corpus/), then
# the differential packet fuzzer (BPF_PROG_TEST_RUN vs the userspace reference) for
# DURATION seconds when it is built, and the independent packet oracle (test_oracle) for
# about DURATION seconds of frames.  Prints one line per fuzzer (executions, corpus,
# findings) and exits 1 if anything was found.  Findings are saved as
# $OUT/libfuzzer/findings/<harness>-crash-*: fix the bug, then copy the input into
# tests/fuzz/corpus/<harness>/ as a regression seed.
#   FUZZERS="config addr" limits the harnesses; JOBS=N runs N processes per harness.
set -u
cd "$(dirname "$0")/.."
dur=${1:-${DURATION:-60}}
OUT=${OUT:-build}
F=$OUT/libfuzzer
jobs=${JOBS:-1}

make -s -j"$(nproc)" OUT="$F" FUZZ=1 fuzz-bins || { echo "fuzz: building the harnesses failed" >&2; exit 1; }
mkdir -p "$F/findings"
total_find=0
printf '%-16s %12s %8s %8s\n' harness executions corpus findings
for src in tests/fuzz/fuzz_*.c; do
	h=$(basename "$src" .c)
	[ -n "${FUZZERS:-}" ] && [[ " $FUZZERS " != *" ${h#fuzz_} "* ]] && continue
	mkdir -p "$F/corpus/$h" "tests/fuzz/corpus/$h"
	before=$(ls "$F/findings" | grep -c "^$h-" || true)
	"$F/fuzz/$h" -max_total_time="$dur" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -jobs="$jobs" -workers="$jobs" \
		-artifact_prefix="$F/findings/$h-" "$F/corpus/$h" "tests/fuzz/corpus/$h" \
		> "$F/$h.log" 2>&1
	execs=$(grep -h 'stat::number_of_executed_units' "$F/$h.log" "$F"/fuzz-*.log 2>/dev/null |
		awk '{ s += $2 } END { print s + 0 }')
	rm -f "$F"/fuzz-*.log
	after=$(ls "$F/findings" | grep -c "^$h-" || true)
	found=$((after - before))
	total_find=$((total_find + found))
	printf '%-16s %12s %8s %8s\n' "${h#fuzz_}" "$execs" "$(ls "$F/corpus/$h" | wc -l)" "$found"
	[ "$found" = 0 ] || grep -E 'ERROR|property failed|runtime error|SUMMARY' "$F/$h.log" | head -5
done

# The differential packet fuzzer (tests/bpf/test_packet_fuzz.c), when the data path has it.
if [ -x "$OUT/tests/test_packet_fuzz" ] && { [ -z "${FUZZERS:-}" ] || [[ " $FUZZERS " == *" packet "* ]]; }; then
	if KR_FUZZ_SECONDS="$dur" "$OUT/tests/test_packet_fuzz" > "$F/packet.log" 2>&1; then
		grep -E '^# (packets|summary)' "$F/packet.log"
	else
		grep -E '^not ok|^# ' "$F/packet.log" | head -20
		total_find=$((total_find + 1))
	fi
fi
# The independent oracle (tests/bpf/test_oracle.c + tests/oracle/kr_oracle.py): about
# DURATION seconds of frames (~15k/s) from a fresh seed.
if [ -x "$OUT/tests/test_oracle" ] && { [ -z "${FUZZERS:-}" ] || [[ " $FUZZERS " == *" oracle "* ]]; }; then
	seed=${KR_ORACLE_SEED:-$(date +%s)}
	if KR_ORACLE_N=$((dur * 15000)) KR_ORACLE_SEED=$seed "$OUT/tests/test_oracle" > "$F/oracle.log" 2>&1; then
		echo "oracle (seed $seed): $(grep -E '^ok .* frames through XDP and TC' "$F/oracle.log" | sed 's/^ok [0-9]* - //')"
	else
		echo "oracle (seed $seed, KR_ORACLE_SEED=$seed to repeat):"
		grep -E '^not ok|^# frame' "$F/oracle.log" | head -20
		total_find=$((total_find + 1))
	fi
fi
echo "findings: $total_find"
[ "$total_find" = 0 ]
