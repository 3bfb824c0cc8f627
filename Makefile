# keyrouter build.  Everything generated goes under $(OUT).
#   make            build build/keyrouter and the BPF objects
#   make test       install missing packages, build, run every test (ends "N passed, N failed")
#   make bench      run the benchmarks (figures and ratios, no assertions)
#   make demo       a small topology in network namespaces with real traffic
#   make install    PREFIX=/usr/local DESTDIR=
#   make V=1        show the full commands
#   make OUT=build/asan SAN=1 san-tests   unit tests under ASan+UBSan (tests/bats/sanitizers.bats)
#   make OUT=build/fuzz FUZZ=1 fuzz-bins  libFuzzer harnesses tests/fuzz/*.c (clang)
#   make fuzz DURATION=600                run every fuzzer longer (scripts/fuzz.sh)
#   make mutate     deliberate bugs, one at a time in a scratch copy: does the suite kill each?
.DELETE_ON_ERROR:
# Skeletons are only named in pattern rules: keep make from deleting them as intermediates.
.SECONDARY:
.DEFAULT_GOAL := all

OUT      ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -std=gnu11 -Iinclude -I$(OUT) -MMD -MP
LDLIBS   += -lbpf -lxdp -ljansson -lelf -lz -lm
# SAN=1: AddressSanitizer + UndefinedBehaviorSanitizer (gcc or clang), aborting on the
# first report.  FUZZ=1: clang, libFuzzer coverage + the same sanitizers.  Use a separate
# OUT for each: their objects must not mix with the plain build.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifeq ($(FUZZ),1)
CC       := $(CLANG)
CFLAGS   += $(SAN_FLAGS) -fsanitize=fuzzer-no-link -DKR_FUZZ=1
else ifeq ($(SAN),1)
CFLAGS   += $(SAN_FLAGS)
endif
BPF_CFLAGS = -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Wextra -Wno-unused-parameter \
	     -Iinclude -Ivmlinux

# Objects depend on the Makefile too, so a flag change rebuilds them.
MAKEFILES_DEP := Makefile

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))

# user/main.c holds main(); everything else in user/ is the library the tests link too.
LIB_SRCS  := $(filter-out user/main.c,$(wildcard user/*.c))
LIB_OBJS  := $(patsubst user/%.c,$(OUT)/user/%.o,$(LIB_SRCS))
TOOL      := $(OUT)/keyrouter

# C test programs (tests/unit: userspace; tests/bpf: through BPF_PROG_TEST_RUN); each prints TAP.
UNIT_SRCS := $(wildcard tests/unit/*.c)
BPFT_SRCS := $(wildcard tests/bpf/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS)) \
	     $(patsubst tests/bpf/%.c,$(OUT)/tests/%,$(BPFT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(OUT)/bench/%,$(BENCH_SRCS))

.PHONY: all deps test bench demo install clean vmlinux fuzz san-tests fuzz-bins mutate

all: $(TOOL) $(BPF_OBJS) $(UNIT_BINS) $(BENCH_BINS)

deps:
	$(Q)scripts/deps.sh

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(MAKEFILES_DEP) | $(OUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $(OUT)/bpf/$*.d -MT $@ -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(OUT)/%.skel.h: $(OUT)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# User objects may include any skeleton: build them all first.
$(OUT)/user/%.o: user/%.c $(MAKEFILES_DEP) $(BPF_SKELS) | $(OUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(TOOL): $(OUT)/user/main.o $(LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(OUT)/tests/%: tests/unit/%.c $(LIB_OBJS) $(MAKEFILES_DEP) $(BPF_SKELS) | $(OUT)/tests
	$(call msg,CC-TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Iuser $< $(LIB_OBJS) -o $@ $(LDLIBS)

$(OUT)/tests/%: tests/bpf/%.c $(LIB_OBJS) $(MAKEFILES_DEP) $(BPF_SKELS) | $(OUT)/tests
	$(call msg,CC-TEST,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Iuser $< $(LIB_OBJS) -o $@ $(LDLIBS)

# libFuzzer harnesses: only with FUZZ=1 (they need clang's -fsanitize=fuzzer).
$(OUT)/fuzz/%: tests/fuzz/%.c $(LIB_OBJS) $(MAKEFILES_DEP) $(BPF_SKELS) | $(OUT)/fuzz
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer -Itests/unit -Iuser $< $(LIB_OBJS) -o $@ $(LDLIBS)

# The userspace unit tests (tests/unit), for SAN=1.
san-tests: $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))

fuzz-bins: $(FUZZ_BINS)

$(OUT)/bench/%: tests/bench/%.c $(LIB_OBJS) $(MAKEFILES_DEP) $(BPF_SKELS) | $(OUT)/bench
	$(call msg,CC-BENCH,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit -Iuser $< $(LIB_OBJS) -o $@ $(LDLIBS)

$(OUT)/bpf $(OUT)/user $(OUT)/tests $(OUT)/bench $(OUT)/fuzz:
	$(Q)mkdir -p $@

test: deps all
	$(Q)tests/run.sh

bench: deps all
	$(Q)scripts/bench.sh

demo: deps all
	$(Q)scripts/demo.sh

fuzz: deps all
	$(Q)scripts/fuzz.sh $(DURATION)

mutate: deps all
	$(Q)scripts/mutate.sh $(MUTATIONS)

install: $(TOOL) $(BPF_OBJS)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/lib/keyrouter
	install -m 0755 $(TOOL) $(DESTDIR)$(PREFIX)/sbin/keyrouter
	install -m 0644 $(BPF_OBJS) $(DESTDIR)$(PREFIX)/lib/keyrouter/

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

clean:
	rm -rf $(OUT)

-include $(wildcard $(OUT)/user/*.d $(OUT)/tests/*.d $(OUT)/bench/*.d $(OUT)/bpf/*.d $(OUT)/fuzz/*.d)
