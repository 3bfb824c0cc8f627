# keyrouter build.  Everything generated goes under $(OUT).
#   make            build build/keyrouter (the BPF program is embedded in it) and
#                   build/bpf/keyrouter.bpf.o (the same object, for bpftool)
#   make test       install missing packages, build, run every test (ends "N passed, N failed")
#   make bench      run the benchmarks (figures and ratios, no assertions)
#   make demo       a small topology in network namespaces with real traffic
#   make install    PREFIX=/usr/local DESTDIR=   (the tool and the production BPF object)
#   make man        $(OUT)/man/keyrouter.8 and keyrouter.json.5 (scripts/man.sh, go-md2man)
#   make deb        the Debian package in build/deb/ (scripts/deb.sh, dpkg-buildpackage)
#   make V=1        show the full commands
#   make OUT=build/asan SAN=1 san-tests   unit tests under ASan+UBSan (tests/bats/sanitizers.bats)
#   make OUT=build/fuzz FUZZ=1 fuzz-bins  libFuzzer harnesses tests/fuzz/*.c (clang)
#   make fuzz DURATION=600                run every fuzzer longer (scripts/fuzz.sh)
#   make soak DURATION=600                the soak test: long-running processes under traffic
#                   and events, DURATION seconds (default 600; scripts/soak.sh, docs/operations.md)
#   make mutate     deliberate bugs, one at a time in a scratch copy: does the suite kill each?
#
# Layers (docs/design.md), each its own archive; a layer's include path holds only its own
# headers and those of the layers below, so including a header from above fails to build:
#   user/core    libkrcore.a    rings, image, key forms, configuration, analytics (no libbpf)
#   user/kernel  libkrkernel.a  pins, maps, publish, apply, attach, stats (libbpf, libxdp)
#   user/daemon  libkrdaemon.a  what the long-running processes share: following an instance
#                               across unload, load and upgrade (prints nothing)
#   user/cli     the keyrouter command: main, one file per command, output
# BPF: bpf/ holds what ships (keyrouter.bpf.c and its stage headers); the test and bench
# programs are in tests/bpf/progs/.
#
# CFLAGS, CPPFLAGS, LDFLAGS and LDLIBS given on the command line add to the project's own
# flags (they do not replace the warnings, include paths or dependency tracking).
.DELETE_ON_ERROR:
.SECONDARY:
.DEFAULT_GOAL := all

OUT      ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
ifeq ($(origin CC),default)
CC       := gcc
endif
CLANG    ?= clang
BPFTOOL  ?= bpftool

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# The BPF target architecture (bpf_tracing.h's __TARGET_ARCH_*), from the build machine.
ARCH     ?= $(shell uname -m)
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst i%86,x86,$(patsubst aarch64,arm64,$(patsubst \
	    ppc64le,powerpc,$(patsubst s390x,s390,$(patsubst riscv64,riscv,$(patsubst \
	    loongarch64,loongarch,$(ARCH))))))))

CFLAGS   ?= -O2 -g
# The project's flags; the user's CFLAGS come after them (so -O0 still gets -Wall).
# -ffile-prefix-map: no absolute path of this checkout in the objects.
KR_CFLAGS := -Wall -Wextra -std=gnu11 -MMD -MP -ffile-prefix-map=$(CURDIR)=.
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifeq ($(FUZZ),1)
CC       := $(CLANG)
KR_CFLAGS += $(SAN_FLAGS) -fsanitize=fuzzer-no-link -DKR_FUZZ=1
else ifeq ($(SAN),1)
KR_CFLAGS += $(SAN_FLAGS)
endif
ALL_CFLAGS = $(KR_CFLAGS) $(CPPFLAGS) $(CFLAGS)

INC_CORE   := -Iinclude -Iuser/core
INC_KERNEL := $(INC_CORE) -Iuser/kernel -I$(OUT)/skel
INC_DAEMON := $(INC_KERNEL) -Iuser/daemon
INC_CLI    := $(INC_DAEMON) -Iuser/cli
LIBS_CORE  := -ljansson -lm -lz
LIBS_KERNEL := -lbpf -lxdp -lelf -lz
# The CLI's own: the exporter's HTTP server.
LIBS_CLI   := -lmicrohttpd

# -fno-strict-aliasing: the data path copies packet bytes and map values as 2-, 4- and 8-byte
# words through pointers of another type (kr_copy4, kr_mac_put, kr_svc_copy), as the kernel,
# which is built with it too.
BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Wextra \
	     -Wno-unused-parameter -fno-strict-aliasing -ffile-prefix-map=$(CURDIR)=. \
	     -Iinclude -Ivmlinux

# Objects depend on the Makefile too, so a flag change rebuilds them.
MAKEFILES_DEP := Makefile

# The shipped program, and the test/bench programs (they may include bpf/ headers).
BPF_OBJ    := $(OUT)/bpf/keyrouter.bpf.o
PROG_SRCS  := $(wildcard tests/bpf/progs/*.bpf.c)
PROG_OBJS  := $(patsubst tests/bpf/progs/%.bpf.c,$(OUT)/tests/progs/%.bpf.o,$(PROG_SRCS))

CORE_SRCS   := $(wildcard user/core/*.c)
KERNEL_SRCS := $(wildcard user/kernel/*.c)
DAEMON_SRCS := $(wildcard user/daemon/*.c)
CLI_SRCS    := $(wildcard user/cli/*.c)
CORE_OBJS   := $(patsubst user/%.c,$(OUT)/user/%.o,$(CORE_SRCS))
KERNEL_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(KERNEL_SRCS))
DAEMON_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(DAEMON_SRCS))
CLI_OBJS    := $(patsubst user/%.c,$(OUT)/user/%.o,$(CLI_SRCS))
# The command library (every command, without main()): linked by the lookup fuzzer.
CLI_LIB_OBJS := $(filter-out $(OUT)/user/cli/main.o,$(CLI_OBJS))
CORE_LIB   := $(OUT)/libkrcore.a
KERNEL_LIB := $(OUT)/libkrkernel.a
DAEMON_LIB := $(OUT)/libkrdaemon.a
CLI_LIB    := $(OUT)/libkrcli.a
TOOL       := $(OUT)/keyrouter

# C test programs, each prints TAP: tests/unit (the core only: no libbpf linked),
# tests/bpf (through BPF_PROG_TEST_RUN: core + kernel).
UNIT_SRCS := $(wildcard tests/unit/*.c)
BPFT_SRCS := $(wildcard tests/bpf/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
# Both folders build into $(OUT)/tests/: a name in both would build only one of them.
ifneq ($(filter $(notdir $(UNIT_SRCS)),$(notdir $(wildcard tests/bpf/*.c))),)
$(error tests/unit and tests/bpf both have $(filter $(notdir $(UNIT_SRCS)),$(notdir $(wildcard tests/bpf/*.c))): rename one (both would build $(OUT)/tests/NAME))
endif
BPFT_BINS := $(patsubst tests/bpf/%.c,$(OUT)/tests/%,$(BPFT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(OUT)/bench/%,$(BENCH_SRCS))

.PHONY: all deps test bench demo install clean vmlinux fuzz san-tests fuzz-bins man deb mutate soak

all: $(TOOL) $(BPF_OBJ) $(PROG_OBJS) $(UNIT_BINS) $(BPFT_BINS) $(BENCH_BINS)

deps:
	$(Q)scripts/deps.sh

# ---- BPF ------------------------------------------------------------------------------
$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(MAKEFILES_DEP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -MMD -MP -MF $(@:.o=.d) -MT $@ -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(OUT)/tests/progs/%.bpf.o: tests/bpf/progs/%.bpf.c $(MAKEFILES_DEP)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Ibpf -Itests/bpf/progs -MMD -MP -MF $(@:.o=.d) -MT $@ \
		-c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(OUT)/skel/keyrouter.skel.h: $(BPF_OBJ)
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name keyrouter_bpf > $@

$(OUT)/skel/%.skel.h: $(OUT)/tests/progs/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Each C file depends on the skeletons it includes (found once, when make reads this).
skels_of = $(addprefix $(OUT)/skel/,$(sort $(shell grep -ho '"[a-z0-9_]*\.skel\.h"' $(1) \
	   2>/dev/null | tr -d '"')))

# ---- userspace layers ----------------------------------------------------------------
$(OUT)/user/core/%.o: user/core/%.c $(MAKEFILES_DEP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_CORE) -c $< -o $@

$(OUT)/user/kernel/%.o: user/kernel/%.c $(MAKEFILES_DEP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_KERNEL) -c $< -o $@

$(OUT)/user/daemon/%.o: user/daemon/%.c $(MAKEFILES_DEP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_DAEMON) -c $< -o $@

$(OUT)/user/cli/%.o: user/cli/%.c $(MAKEFILES_DEP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_CLI) -c $< -o $@

$(foreach s,$(KERNEL_SRCS) $(DAEMON_SRCS) $(CLI_SRCS),$(eval \
	$(patsubst user/%.c,$(OUT)/user/%.o,$(s)): $(call skels_of,$(s))))

$(CORE_LIB): $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcsD $@ $^
$(KERNEL_LIB): $(KERNEL_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcsD $@ $^
$(DAEMON_LIB): $(DAEMON_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcsD $@ $^
$(CLI_LIB): $(CLI_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcsD $@ $^

# Commands register themselves in a linker section (cmd.h): nothing references them by
# name, so the whole command library is linked.
$(TOOL): $(OUT)/user/cli/main.o $(CLI_LIB) $(DAEMON_LIB) $(KERNEL_LIB) $(CORE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< -Wl,--whole-archive $(CLI_LIB) -Wl,--no-whole-archive \
		$(DAEMON_LIB) $(KERNEL_LIB) $(CORE_LIB) -o $@ $(LIBS_CLI) $(LIBS_KERNEL) $(LIBS_CORE) $(LDLIBS)

# ---- tests, benchmarks, fuzzers --------------------------------------------------------
$(OUT)/tests/%: tests/unit/%.c $(CORE_LIB) $(MAKEFILES_DEP)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_CORE) -Itests/unit $(LDFLAGS) $< $(CORE_LIB) -o $@ \
		$(LIBS_CORE) -lz $(LDLIBS)

$(OUT)/tests/%: tests/bpf/%.c $(KERNEL_LIB) $(CORE_LIB) $(MAKEFILES_DEP)
	$(call msg,CC-TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_KERNEL) -Itests/unit -Itests/bpf -Itests/bpf/progs $(LDFLAGS) $< \
		$(KERNEL_LIB) $(CORE_LIB) -o $@ $(LIBS_KERNEL) $(LIBS_CORE) $(LDLIBS)

$(OUT)/bench/%: tests/bench/%.c $(KERNEL_LIB) $(CORE_LIB) $(MAKEFILES_DEP)
	$(call msg,CC-BENCH,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INC_KERNEL) -Itests/unit -Itests/bpf -Itests/bpf/progs $(LDFLAGS) $< \
		$(KERNEL_LIB) $(CORE_LIB) -o $@ $(LIBS_KERNEL) $(LIBS_CORE) $(LDLIBS)

# libFuzzer harnesses: only with FUZZ=1 (they need clang's -fsanitize=fuzzer).
$(OUT)/fuzz/%: tests/fuzz/%.c $(CLI_LIB) $(DAEMON_LIB) $(KERNEL_LIB) $(CORE_LIB) $(MAKEFILES_DEP)
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(INC_CLI) -Itests/unit $(LDFLAGS) $< \
		-Wl,--whole-archive $(CLI_LIB) -Wl,--no-whole-archive $(DAEMON_LIB) $(KERNEL_LIB) $(CORE_LIB) -o $@ $(LIBS_CLI) $(LIBS_KERNEL) $(LIBS_CORE) $(LDLIBS)

$(foreach s,$(BPFT_SRCS) $(BENCH_SRCS) $(FUZZ_SRCS),$(eval $(OUT)/$(if $(filter \
	tests/bench/%,$(s)),bench,$(if $(filter tests/fuzz/%,$(s)),fuzz,tests))/$(basename \
	$(notdir $(s))): $(call skels_of,$(s))))

# The userspace unit tests (tests/unit), for SAN=1.
san-tests: $(UNIT_BINS)

fuzz-bins: $(FUZZ_BINS)

# make test builds on every core (a plain `make test` would compile one file at a time),
# after deps: the packages are there before anything compiles.
NPROC := $(shell nproc 2>/dev/null || echo 1)
test: deps
	$(Q)$(MAKE) --no-print-directory $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC)) all
	$(Q)tests/run.sh

bench: deps all
	$(Q)scripts/bench.sh

demo: deps all
	$(Q)scripts/demo.sh

fuzz: deps all
	$(Q)scripts/fuzz.sh $(DURATION)

soak: deps all
	$(Q)scripts/soak.sh $(or $(DURATION),600)

mutate: deps all
	$(Q)scripts/mutate.sh $(MUTATIONS)

install: $(TOOL) $(BPF_OBJ)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/lib/keyrouter
	install -m 0755 $(TOOL) $(DESTDIR)$(PREFIX)/sbin/keyrouter
	install -m 0644 $(BPF_OBJ) $(DESTDIR)$(PREFIX)/lib/keyrouter/

# Man pages from the tool's own --help and docs/config.md: they cannot drift.
man: $(OUT)/man/keyrouter.8

$(OUT)/man/keyrouter.8: $(TOOL) man/keyrouter.8.md man/keyrouter.json.5.md docs/config.md scripts/man.sh
	$(call msg,MAN,$(OUT)/man)
	$(Q)scripts/man.sh $(TOOL) $(OUT)/man

deb:
	$(Q)scripts/deb.sh

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

clean:
	rm -rf $(OUT)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)

# Each layer's include path refuses the headers of the layers above it: a probe that
# includes a kernel header with the core's path, or a CLI header with the kernel's, must
# not compile (tests/bats/layout.bats).
.PHONY: check-layers
check-layers:
	@d=$$(mktemp -d) && trap 'rm -rf $$d' EXIT && \
	for probe in "core:$(INC_CORE):ops.h" "core:$(INC_CORE):cmd.h" \
		     "kernel:$(INC_KERNEL):cmd.h" "kernel:$(INC_KERNEL):follow.h" \
		     "daemon:$(INC_DAEMON):cmd.h"; do \
		layer=$${probe%%:*}; rest=$${probe#*:}; inc=$${rest%:*}; hdr=$${rest##*:}; \
		printf '#include "%s"\n' "$$hdr" > $$d/p.c; \
		if $(CC) $$inc -fsyntax-only $$d/p.c 2>/dev/null; then \
			echo "layer $$layer can include $$hdr"; exit 1; fi; \
		echo "layer $$layer cannot include $$hdr: ok"; \
	done

# Every header of bpf/ builds on its own, so the stages include in any order (the order of
# the program is kr_datapath.h's; tests/bats/layout.bats).  BPF_HEADERS picks others.
BPF_HEADERS ?= $(wildcard bpf/*.h)
.PHONY: check-bpf-headers
check-bpf-headers:
	@for h in $(BPF_HEADERS); do \
		printf '#include "%s"\n' "$$(basename $$h)" | \
		$(CLANG) $(BPF_CFLAGS) -Werror -Wno-unused-function -Wno-undefined-internal \
			-Ibpf -I$$(dirname $$h) -fsyntax-only -x c - || \
			{ echo "$$h does not build alone"; exit 1; }; \
		echo "$$h builds alone: ok"; \
	done

# Compile SRC (files of user/) with the headers of the folder INC first, no output
# (tests/bats/layout.bats: a counter renamed in a copy of include/ breaks its readers).
.PHONY: check-syntax
check-syntax:
	$(Q)$(CC) -std=gnu11 -fsyntax-only -I$(INC) $(INC_CLI) $(SRC)

# The BPF branch of kr_lookup.h loads a point's hash as one (2-byte aligned) 32-bit word, as
# the BPF program does: not an alignment fault for UBSan to stop on in that test.
$(OUT)/tests/test_image_bpf: KR_CFLAGS += -fno-sanitize=alignment

# The QUIC-LB codec test checks AES-128 against nettle (an independent implementation).
$(OUT)/tests/test_quic_lb: LDLIBS += -lnettle
