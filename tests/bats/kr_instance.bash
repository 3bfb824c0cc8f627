# Shared by bats files that load keyrouter in a namespace of their own ($N): paths to the
# tool, and a teardown that removes the instance and the namespace even when a test fails.
kr_instance_setup() {
	cd "$BATS_TEST_DIRNAME/../.."
	K=${KEYROUTER:-./build/keyrouter}
	KK=$(pwd)/$K
	T=$BATS_TEST_TMPDIR
}

kr_instance_teardown() {
	if [ -n "${N:-}" ]; then
		nsenter --net="/run/netns/$N" "$KK" unload v0 --instance "$N" >/dev/null 2>&1
		rm -rf "/sys/fs/bpf/keyrouter/$N"
		ip netns del "$N" 2>/dev/null
	fi
	return 0
}

# Skip a test that loads the program unless root with the BPF object built.
needs_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
	[ -f "${OUT:-build}/bpf/keyrouter.bpf.o" ] || skip "no BPF object"
}
