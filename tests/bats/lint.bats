#!/usr/bin/env bats
# No check that cannot fail: tests/lint/bats_lint.py over every bats file and helper
# (`! cmd` not on a block's last line, `run` without a status check, checks joined by
# `&&` or swallowed by `|| echo`), and the lint itself flags each of those in a crafted file.
bats_require_minimum_version 1.5.0

setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	LINT="/usr/bin/python3 tests/lint/bats_lint.py"
}

@test "lint: no bats check in tests/ that cannot fail" {
	run $LINT tests/bats/*.bats tests/bats/*.bash tests/lib/*.bash
	echo "$output"
	[ "$status" = 0 ]
	[ -z "$output" ]
}

@test "lint: flags each pattern of a crafted file, and only those" {
	f=$BATS_TEST_TMPDIR/bad.bats
	# (written with printf: bats would take a test line of a here-document for its own)
	printf '%s\n' "@""test \"bad\" {" \
		'	! grep -q x /etc/hostname' \
		'	run true' \
		'	[ 1 = 2 ] && [ 3 = 3 ]' \
		'	[ 1 = 2 ] || echo "differs"' \
		'	run -0 true' \
		'	run false' \
		'	[ "$status" = 1 ]' \
		'	[ -d /tmp ] && rm -rf "$BATS_TEST_TMPDIR/none"' \
		'	[[ "$x" == *"a && b"* ]]' \
		'	! true' \
		'}' \
		'helper() {' \
		'	! false' \
		'	echo done' \
		'}' > "$f"
	run -1 $LINT "$f"
	echo "$output"
	[ "${#lines[@]}" = 5 ]
	[[ "$output" == *"bad.bats:2: bang: ! grep -q x /etc/hostname"* ]]
	[[ "$output" == *"bad.bats:3: run: run true"* ]]
	[[ "$output" == *"bad.bats:4: and: [ 1 = 2 ] && [ 3 = 3 ]"* ]]
	[[ "$output" == *"bad.bats:5: or: [ 1 = 2 ] || echo"* ]]
	[[ "$output" == *"bad.bats:14: bang: ! false"* ]]
}

@test "lint: flags run -N inside a loop over \$i (bats's flag check resets \$i), not other names; a bare wait" {
	f=$BATS_TEST_TMPDIR/loop.bats
	printf '%s\n' "@""test \"loop\" {" \
		'	for i in 1 2; do' \
		'		run -0 true' \
		'		[ "$i" -ge 1 ]' \
		'	done' \
		'	for be in 1 2; do' \
		'		run -0 true' \
		'	done' \
		'	for i in 1 2; do echo "$i"; done' \
		'	run -0 true' \
		'	sleep 1 &' \
		'	wait' \
		'	wait "$!"' \
		'}' > "$f"
	run -1 $LINT "$f"
	echo "$output"
	[ "${#lines[@]}" = 2 ]
	[[ "$output" == *"loop.bats:3: loopi: run -0 true"* ]]
	[[ "$output" == *"loop.bats:12: wait: wait"* ]]
}

@test "lint: the loopi rule is real: bats's run -0 changes a caller's \$i" {
	local i=7
	run -0 true
	[ "$i" != 7 ]
}

@test "docs: every path of the repository that the documentation and the units name exists" {
	run /usr/bin/python3 tests/lint/doc_paths.py README.md SECURITY.md docs/*.md man/*.md \
		dist/systemd/* dist/bash-completion/* examples/*.json
	echo "$output"
	[ "$status" = 0 ]
	# and it finds a missing one
	printf 'see `user/core/nosuch.{c,h}` and tests/bats/nosuch.bats, not /sys/fs/bpf/x\n' \
		> "$BATS_TEST_TMPDIR/d.md"
	run -1 /usr/bin/python3 tests/lint/doc_paths.py "$BATS_TEST_TMPDIR/d.md"
	[ "${#lines[@]}" = 2 ]
}

@test "comments: every path of the repository that a comment of the code, tests and scripts names exists" {
	run /usr/bin/python3 tests/lint/doc_paths.py --comments Makefile \
		$(find user bpf include tests scripts -type f \( -name '*.[ch]' -o -name '*.sh' \
			-o -name '*.bash' -o -name '*.bats' -o -name '*.py' \) -not -path '*/corpus/*' | sort)
	echo "$output"
	[ "$status" = 0 ]
	# comments only: code and strings naming a path are not read; a comment is
	printf '#include <bpf/bpf.h>\nconst char *s = "user/nosuch.c";\n/* see user/gone.c\n * and tests/gone.bats */ int x; // bpf/gone.h\n' \
		> "$BATS_TEST_TMPDIR/c.c"
	run -1 /usr/bin/python3 tests/lint/doc_paths.py --comments "$BATS_TEST_TMPDIR/c.c"
	echo "$output"
	[ "${#lines[@]}" = 3 ]
	printf 'x=1 # see scripts/gone.sh\necho "user/nosuch.c # not a comment"\n' > "$BATS_TEST_TMPDIR/s.sh"
	run -1 /usr/bin/python3 tests/lint/doc_paths.py --comments "$BATS_TEST_TMPDIR/s.sh"
	[ "${#lines[@]}" = 1 ]
}
