#!/usr/bin/env bats
# The repository's shape (docs/design.md): layers that cannot reach up, a core without
# libbpf, bpf/ holding only what ships, an install of the tool and the production object.
bats_require_minimum_version 1.5.0
load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	OUT=${OUT:-build}
}

@test "a layer's include path refuses the headers of the layers above it" {
	run -0 make -s check-layers
	assert_line "layer core cannot include ops.h: ok"
	assert_line "layer kernel cannot include cmd.h: ok"
	assert_line "layer kernel cannot include follow.h: ok"
	assert_line "layer daemon cannot include cmd.h: ok"
}

@test "the core includes no libbpf header and its unit tests link no libbpf" {
	run grep -rlE '#include <(bpf|xdp)/' user/core
	assert_failure 1
	n=0
	for t in tests/unit/*.c; do
		b="$OUT/tests/$(basename "$t" .c)"
		[ -x "$b" ]
		run -0 ldd "$b"
		refute_output --partial libbpf
		refute_output --partial libxdp
		n=$((n + 1))
	done
	[ "$n" -gt 5 ]
}

@test "bpf/ holds the shipped program only; test and bench programs are under tests/" {
	run -0 ls bpf
	assert_output --partial keyrouter.bpf.c
	[ "$(ls bpf/*.bpf.c)" = bpf/keyrouter.bpf.c ]
	run -0 ls tests/bpf/progs
	assert_output --partial kr_ring_test.bpf.c
}

@test "bpf/ carries no benchmark hook: the benchmark builds are a template under tests/" {
	run grep -rnE 'KR_BENCH|kr_bench|kr_dpbench' bpf/
	assert_failure 1
	# and the check would see one: the template's own names
	run -0 grep -c 'KR_BENCH_VARIANT' tests/bpf/progs/kr_dpbench.h
	for f in tests/bpf/progs/kr_dpbench_*.bpf.c; do
		run -0 grep -c '#include "kr_dpbench.h"' "$f"
		run -1 grep -c 'keyrouter.bpf.c' "$f"
		assert_output 0
	done
}

@test "every header of bpf/ builds alone, so the stages include in any order" {
	run -0 make -s check-bpf-headers
	for h in bpf/*.h; do
		assert_line "$h builds alone: ok"
	done
	# a header that uses the backends map without including its definition does not
	d=$BATS_TEST_TMPDIR/hdr
	mkdir -p "$d"
	printf '%s\n' '#include "vmlinux.h"' '#include <bpf/bpf_helpers.h>' \
		'static __always_inline void *kr_probe(__u32 *k) { return bpf_map_lookup_elem(&kr_backends, k); }' \
		> "$d/kr_probe.h"
	run make -s check-bpf-headers BPF_HEADERS="$d/kr_probe.h"
	assert_failure
	assert_output --partial "kr_probe.h does not build alone"
}

@test "make install installs the tool and the production BPF object, nothing else" {
	d=$BATS_TEST_TMPDIR/root
	run -0 make -s install DESTDIR="$d" PREFIX=/opt/kr OUT="$OUT"
	run -0 find "$d" -type f
	assert_equal "$(echo "$output" | sort | tr '\n' ' ')" \
		"$d/opt/kr/lib/keyrouter/keyrouter.bpf.o $d/opt/kr/sbin/keyrouter "
}

@test "load uses the object built into the tool, not one in the working directory; --object names another" {
	load kr_instance
	kr_instance_setup
	N=kr-layout-$$
	cat > "$T/c.json" <<'JSON'
{ "rings": [ { "name": "r", "format": "v2", "backends": [ { "address": "10.9.0.2:53" } ] } ] }
JSON
	ip netns add "$N"
	ip -n "$N" link add v0 type veth peer name v1
	ip -n "$N" link set v0 up
	ip -n "$N" link set v1 up
	mkdir -p "$T/cwd/build/bpf"
	echo "not an ELF object" > "$T/cwd/build/bpf/keyrouter.bpf.o"
	cd "$T/cwd"
	run -1 nsenter --net="/run/netns/$N" "$KK" load v0 -c "$T/c.json" --mode generic \
		--instance "$N" --object "$T/cwd/build/bpf/keyrouter.bpf.o"
	assert_output --partial "couldn't open the BPF object '$T/cwd/build/bpf/keyrouter.bpf.o'"
	run -0 nsenter --net="/run/netns/$N" "$KK" load v0 -c "$T/c.json" --mode generic \
		--instance "$N"
	run -0 nsenter --net="/run/netns/$N" "$KK" status --instance "$N"
	assert_output --partial "v0 (attached), generic mode, program id"
	run -0 nsenter --net="/run/netns/$N" "$KK" unload v0 --instance "$N"
}

teardown() {
	[ -n "${N:-}" ] || return 0
	kr_instance_teardown
}

@test "nothing cites a file outside the repository" {
	run git grep -nE 'DESIGN\.md|\.\./shared|/work/' -- . ':!tests/bats/layout.bats'
	assert_failure 1
}

# Only the command-line layer prints: the library archives call no stdio output function and
# name no stdout/stderr (their diagnostics go through log.h's handler, which user/cli/output.c
# installs; results are returned).  Checked on the built objects: a printf the compiler turned
# into puts or fwrite counts, a comment does not.
PRINTERS='printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putchar|putc|fputc|perror|fwrite|putchar_unlocked|fputc_unlocked|fputs_unlocked|fwrite_unlocked|__printf_chk|__fprintf_chk|__vprintf_chk|__vfprintf_chk|__dprintf_chk|stdout|stderr'

@test "only user/cli prints: libkrcore.a, libkrkernel.a and libkrdaemon.a call no printf/fprintf/puts/fputs/putchar/perror/vprintf" {
	for lib in libkrcore.a libkrkernel.a libkrdaemon.a; do
		[ -f "$OUT/$lib" ] || fail "no $OUT/$lib (run make)"
		run -0 nm -A -u "$OUT/$lib"
		[ "${#lines[@]}" -gt 3 ] || fail "nm listed nothing for $lib"
		run -1 grep -E " U ($PRINTERS)\$" <<< "$output"
	done
}

@test "the check sees a printing call (it would fail on one)" {
	# the command library prints, so the same check finds its calls
	run -0 nm -A -u "$OUT/libkrcli.a"
	run -0 grep -E " U ($PRINTERS)\$" <<< "$output"
}

@test "no loop between the configuration and the analytics sources: config*.o use nothing of an_source.o" {
	o=$OUT/user/core
	[ -f "$o/an_source.o" ] && [ -f "$o/config.o" ] || fail "no $o/*.o (run make)"
	defs=$(nm --defined-only "$o/an_source.o" | awk '$2 ~ /^[TDBR]$/ {print $3}')
	[ -n "$defs" ] || fail "nm listed no symbols of an_source.o"
	used=$(nm -u "$o"/config*.o | awk '$1 == "U" {print $2}' | sort -u)
	run -1 grep -Fxf <(echo "$defs") <<< "$used"
	# the other direction exists (an_source.c loads configurations): the check can see a use
	run -0 grep -Fx kr_config_load < <(nm -u "$o/an_source.o" | awk '{print $2}')
}

# The counter structs' u64 members (pad aside), as "struct.member" words.
counter_members() {
	for st in kr_counters kr_svc_stats kr_slot_stats kr_backend_stats; do
		sed -n "/^struct $st {/,/^};/s/^\t__u64 \([a-z_0-9]*\);.*/$st.\1/p" \
			include/kr_datapath_kern_user.h | grep -v '\.pad$'
	done
}

@test "counters are read by member: one renamed in the shared header alone breaks status, stats and the exporter" {
	d=$BATS_TEST_TMPDIR/inc
	cp -r include "$d"
	# the copy as it is compiles: each error below is a rename's
	LC_ALL=C run -0 make -s check-syntax INC="$d" SRC="user/kernel/ops_stats.c user/cli/prom.c"
	members=$(counter_members)
	[ "$(wc -w <<< "$members")" -gt 40 ] || fail "found only: $members"
	# every member renamed (X -> X_renamed), in its struct and in its layout assert
	for m in $members; do
		st=${m%.*} f=${m#*.}
		sed -i -e "/^struct $st {/,/^};/s/^\(\t__u64 \)$f;/\1${f}_renamed;/" \
			-e "s/^KR_LAYOUT_AT($st, $f,/KR_LAYOUT_AT($st, ${f}_renamed,/" \
			"$d/kr_datapath_kern_user.h"
	done
	LC_ALL=C run -2 make -s check-syntax INC="$d" SRC=user/kernel/ops_stats.c
	tables=$output
	LC_ALL=C run -2 make -s check-syntax INC="$d" SRC=user/cli/prom.c
	prom=$output
	# not exported (the exporter derives or leaves them); every other member is
	unexported="kr_counters.seen kr_svc_stats.packets kr_svc_stats.failover_walks
		kr_svc_stats.quic_lb_routed"
	for m in $members; do
		st=${m%.*} f=${m#*.}
		msg="struct $st' has no member named '$f'"  # (or 'const struct ...')
		# status / stats name every global and per-service counter by its member
		if [ "$st" = kr_counters ] || [ "$st" = kr_svc_stats ]; then
			grep -qF "$msg" <<< "$tables" ||
				fail "renaming $m does not break user/kernel/ops_stats.c"
		fi
		if grep -qw "$m" <<< "$unexported"; then
			grep -qF "$msg" <<< "$prom" &&
				fail "prom.c reads $m: take it out of the unexported list"
		else
			grep -qF "$msg" <<< "$prom" ||
				fail "renaming $m does not break user/cli/prom.c (the exporter)"
		fi
	done
}

@test "map names: once in include/kr_map_names.h for both sides; the object's maps are exactly those; user/ spells none itself" {
	obj=$OUT/bpf/keyrouter.bpf.o
	[ -f "$obj" ] || fail "no $obj (run make)"
	h=include/kr_map_names.h
	named=$(sed -n 's/^#define KR_MAP_NAME_[A-Z0-9_]*[[:space:]]\+\(kr_[a-z0-9_]*\)$/\1/p' "$h" | sort)
	[ "$(wc -l <<< "$named")" -gt 20 ] || fail "found only: $named"
	# the maps of the built object (its BTF's .maps section)
	run -0 bpftool btf dump file "$obj"
	maps=$(sed -n "/DATASEC '.maps'/,/^\[/s/.*(VAR '\(kr_[a-z0-9_]*\)')$/\1/p" <<< "$output" | sort)
	[ -n "$maps" ] || fail "no maps in the BTF of $obj"
	assert_equal "$maps" "$named"
	# bpf/ declares every map through its macro, not by a name of its own
	run -1 grep -rn '} *kr_[a-z0-9_]* *SEC("\.maps")' bpf
	# each string is made from the macro of the same name (KR_MAP_X from KR_MAP_NAME_X)
	run -0 grep -c '^#define KR_MAP_[A-Z0-9_]*[[:space:]]*KR_MAP_STR(' "$h"
	[ "$output" -eq "$(wc -l <<< "$named")" ]
	run -1 grep -vE '^#define KR_MAP_([A-Z0-9_]+)[[:space:]]+KR_MAP_STR\(KR_MAP_NAME_\1\)$' \
		< <(grep '^#define KR_MAP_[A-Z0-9_]*[[:space:]]*KR_MAP_STR(' "$h")
	# no map name as a string literal of its own in the tool
	for m in $named; do
		run -1 grep -rn --include='*.[ch]' "\"$m\"" user
	done
}
