#!/usr/bin/env bats
# Gradual migration in the real world: DNS (real unbound on 4 backends, real dig and
# dnsperf), keyrouter in native XDP, l2.  The active ring has backends b1 b2 b3; the new
# version adds b4.  `ring stage`, `ring migrate --percent 50`, `--percent 100`, `ring commit`,
# while dnsperf streams queries through the router the whole time (none may be lost), and
# after each step 2000 names are asked once each:
#   staged (0 %): every answer from the old ring's prediction (staging moves nothing)
#   50 %:  every answer from the old or the new prediction; the fraction that changed
#          backend ~ f/2, f = `keyrouter diff`'s exact moved share of the key space
#   100 %: every answer from the new ring's prediction; moved fraction ~ f
#   commit: every answer from the new ring's prediction
# Statistical bound: with n names whose CRC-32 hashes are uniform on the key space, the
# number that moves is Binomial(n, p) (p = f at 100 %; p = f/2 at 50 %, since the slot
# choice mix32(hash) is independent of the ring position), so we require
# |moved/n - p| <= 4 * sqrt(p (1 - p) / n)  (a false failure has probability < 1e-4).

load ../lib/e2e_common

N=2000

setup_file() {
	e2e_require_keyrouter "ring stage" "ring migrate" "ring commit" diff || return 0
	e2e_setup_file 4 || return 1
	topo_start_dns || return 1
	e2e_config "$TOPO_DIR/old.json" l2 "1 2 3" dns:dns:53
	e2e_config "$TOPO_DIR/new.json" l2 "1 2 3 4" dns:dns:53
	e2e_names $N m >"$TOPO_DIR/names"
	e2e_load "$TOPO_DIR/old.json" >"$TOPO_DIR/load.log" 2>&1 || { cat "$TOPO_DIR/load.log" >&2; return 1; }
}

teardown_file() { e2e_teardown_file; }
setup() { e2e_setup; }

# step NAME: ask every name once; answers in $TOPO_DIR/ans.NAME
step() {
	e2e_dns_batch "$TOPO_VIP4" "$TOPO_DIR/names" >"$TOPO_DIR/ans.$1"
	[ "$(wc -l <"$TOPO_DIR/ans.$1")" = $N ] || { echo "$1: only $(wc -l <"$TOPO_DIR/ans.$1") of $N answered"; return 1; }
}

# moved OLD_ANSWERS ANSWERS: fraction of names whose backend differs
moved() { paste -d' ' "$1" "$2" | awk '{ n++; if ($2 != $4) m++ } END { printf "%.6f\n", m / n }'; }

# within OBSERVED P: |OBSERVED - P| <= 4 sqrt(P (1 - P) / N)
within() {
	awk -v o="$1" -v p="$2" -v n=$N 'BEGIN {
		b = 4 * sqrt(p * (1 - p) / n); d = o - p; if (d < 0) d = -d
		printf "  observed %.4f expected %.4f |diff| %.4f bound %.4f\n", o, p, d, b
		exit !(d <= b) }'
}

@test "migration: stage +1 backend, migrate 0 -> 50 -> 100 %, commit; keys moved as diff predicts; no query lost" {
	local f kr=(--instance "$TOPO_INSTANCE")
	f=$("$TOPO_KEYROUTER" diff --old-config "$TOPO_DIR/old.json" --new-config "$TOPO_DIR/new.json" \
		--ring dns4 --json | jq -r .moved)
	echo "keyrouter diff: moved share f = $f"
	e2e_predict "$TOPO_DIR/old.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred.old"
	e2e_predict "$TOPO_DIR/new.json" dns4 "$TOPO_DIR/names" >"$TOPO_DIR/pred.new"

	step before
	e2e_compare "$TOPO_DIR/pred.old" "$TOPO_DIR/ans.before"

	# dnsperf through the router during every step: back-to-back 2-second runs until the
	# flag file goes away (each run ends on its own, so every query is either answered or
	# counted lost; an interrupted run would leave its last queries unaccounted for)
	awk '{ print $1 " A" }' "$TOPO_DIR/names" >"$TOPO_DIR/perf.in"
	touch "$TOPO_DIR/perf.flag"
	(while [ -e "$TOPO_DIR/perf.flag" ]; do
		ip netns exec "$TOPO_C" dnsperf -s "$TOPO_VIP4" -d "$TOPO_DIR/perf.in" -l 2 -Q 3000 \
			-c 8 -q 64 -t 3 2>&1
	done >"$TOPO_DIR/perf.out" 3>&-) &
	local perf=$!
	sleep 0.5

	topo_kr ring stage dns4 -c "$TOPO_DIR/new.json" "${kr[@]}"
	step staged
	echo "staged (0 %):"
	e2e_compare "$TOPO_DIR/pred.old" "$TOPO_DIR/ans.staged"

	topo_kr ring migrate dns4 --percent 50 "${kr[@]}"
	step half
	echo "50 %:"
	paste -d' ' "$TOPO_DIR/pred.old" "$TOPO_DIR/pred.new" "$TOPO_DIR/ans.half" |
		awk '{ if ($6 != $2 && $6 != $4) { bad++; print "  " $1 " answered by b" $6 ", neither old b" $2 " nor new b" $4 } }
		     END { exit bad > 0 }'
	within "$(moved "$TOPO_DIR/ans.before" "$TOPO_DIR/ans.half")" "$(awk -v f="$f" 'BEGIN { print f / 2 }')"

	topo_kr ring migrate dns4 --percent 100 "${kr[@]}"
	step full
	echo "100 %:"
	e2e_compare "$TOPO_DIR/pred.new" "$TOPO_DIR/ans.full"
	within "$(moved "$TOPO_DIR/ans.before" "$TOPO_DIR/ans.full")" "$f"
	# keys moved at 50 % stayed moved at 100 % (raising the fraction never moves keys back)
	paste -d' ' "$TOPO_DIR/ans.before" "$TOPO_DIR/ans.half" "$TOPO_DIR/ans.full" |
		awk '$2 != $4 && $4 != $6 { bad++ } END { exit bad > 0 }'

	topo_kr ring commit dns4 "${kr[@]}"
	step committed
	echo "committed:"
	e2e_compare "$TOPO_DIR/pred.new" "$TOPO_DIR/ans.committed"

	rm -f "$TOPO_DIR/perf.flag"
	wait $perf
	run awk '/Queries sent:/ { s += $3; r++ } /Queries completed:/ { c += $3 } /Queries lost:/ { l += $3 }
		 END { printf "dnsperf during the migration: %d runs, sent %d, completed %d, lost %d\n", r, s, c, l
		       exit !(s > 1000 && c == s && l == 0) }' "$TOPO_DIR/perf.out"
	echo "$output"
	[ "$status" -eq 0 ]
}
