# convgrad: ahead-of-time kernel generator for convolution backward passes.
#
#   make deps     install the Debian packages the project needs (only the missing ones)
#   make          build the convgrad tool and libconvgrad
#   make demo     the main job: generate, build and run the example problems, verified
#   make test     the whole test suite (installs what is missing first)
#   make bench    convgrad vs oneDNN on the benchmark shapes (not part of the tests)

CC := clang
BUILD := build
PREFIX ?= /usr/local

DEB_PACKAGES := clang make libcjson-dev libomp-dev glslc libvulkan-dev mesa-vulkan-drivers \
	vulkan-validationlayers spirv-tools libcmocka-dev python3-torch python3-numpy \
	libdnnl-dev gnuplot-nox libclang-rt-14-dev pkg-config

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c17 -D_GNU_SOURCE -fPIC -fopenmp $(WARN) -Iruntime -Igen $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS := -lcjson -ldl -lm -fopenmp $(EXTRA_LDFLAGS)

RUNTIME_SRCS := $(sort $(wildcard runtime/*.c))
GEN_SRCS := $(sort $(filter-out gen/main.c,$(wildcard gen/*.c)))
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_SUPPORT_SRCS := $(sort $(wildcard tests/support/*.c))

RUNTIME_OBJS := $(RUNTIME_SRCS:%.c=$(BUILD)/%.o)
GEN_OBJS := $(GEN_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/abi_text.o $(BUILD)/gen/build_id.o
TEST_SUPPORT_OBJS := $(TEST_SUPPORT_SRCS:%.c=$(BUILD)/%.o)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps demo test test-c test-cli test-torch bench clean install fuzz fuzz-build fuzz-regress test-asan test-bins packs golden
all: $(BUILD)/convgrad $(BUILD)/libconvgrad.a $(BUILD)/libconvgrad.so

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	else echo "deps: all $(words $(DEB_PACKAGES)) packages present"; fi

$(BUILD)/%.o: %.c $(wildcard runtime/*.h gen/*.h tests/support/*.h)
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

# The ABI header's text, embedded in the generator so that packs carry the exact header.
$(BUILD)/gen/abi_text.c: runtime/cg_abi.h
	@mkdir -p $(dir $@)
	@{ echo 'const char cg_abi_header_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(BUILD)/gen/abi_text.o: $(BUILD)/gen/abi_text.c
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

# A digest of everything that decides what the generator emits (planner, emitters, templates,
# runtime ABI). The kernel cache keys on it, so a changed generator never reuses old kernels.
BUILD_ID_INPUTS := $(sort $(wildcard gen/*.c gen/*.h runtime/*.h templates/*/*))
$(BUILD)/gen/build_id.c: $(BUILD_ID_INPUTS)
	@mkdir -p $(dir $@)
	@echo "const char cg_generator_build_id[] = \"$$(cat $^ | sha256sum | cut -c1-16)\";" > $@

$(BUILD)/gen/build_id.o: $(BUILD)/gen/build_id.c
	@$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/convgrad: $(BUILD)/gen/main.o $(GEN_OBJS) $(RUNTIME_OBJS)
	@echo "  LD    $@"
	@$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/libconvgrad.a: $(RUNTIME_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libconvgrad.so: $(RUNTIME_OBJS)
	@echo "  LD    $@"
	@$(CC) -shared $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT_OBJS) $(GEN_OBJS) $(RUNTIME_OBJS)
	@mkdir -p $(dir $@)
	@echo "  LD    $@"
	@$(CC) $(ALL_CFLAGS) -Itests/support $^ -o $@ $(LDLIBS) -lcmocka

demo: deps all
	@bash tests/demo.sh

# The whole suite: C unit tests (cmocka), CLI contract tests, PyTorch cross-check.
test: deps all $(TEST_BINS)
	@bash tests/run_all.sh $(TEST_BINS)

bench: deps all
	@$(MAKE) -C bench run

clean:
	rm -rf $(BUILD)

# robustness: fuzz, sanitizers
#
#   make fuzz FUZZ_SECONDS=N   build the libFuzzer targets (tests/fuzz/fuzz_*.c) into
#                              $(BUILD)/fuzz/ and run each for N seconds (default 60) on a
#                              scratch copy of tests/fuzz/corpus/<target>/; crashes land in
#                              $(BUILD)/fuzz/artifacts/<target>/
#   make fuzz-build            only build them
#   make fuzz-regress          replay tests/fuzz/regressions/<target>/ (every crash ever found)
#   make test-asan             the C unit tests rebuilt into build-asan/ with ASan + UBSan
#                              (leak checking on; tests/lsan.supp lists the only suppressions)
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := problem_json npy manifest miopen overrides sweep tuning_db
FUZZ_CFLAGS := -std=c17 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined $(WARN) -Iruntime -Igen
FUZZ_SANITIZERS := address,undefined
# Each target links only the sources its parser needs.
FUZZ_SRCS_problem_json := gen/problem_json.c runtime/cg_problem.c
FUZZ_SRCS_npy := runtime/cg_npy.c runtime/cg_problem.c
FUZZ_SRCS_manifest := runtime/cgrt_manifest.c runtime/cg_problem.c
FUZZ_SRCS_miopen := gen/miopen_import.c runtime/cg_problem.c
FUZZ_SRCS_sweep := gen/sweep_spec.c gen/problem_json.c runtime/cg_problem.c
FUZZ_SRCS_overrides := $(sort $(wildcard gen/plan*.c)) gen/tiles.c \
	gen/kernel_name.c gen/target.c gen/layout_strides.c runtime/cg_problem.c
FUZZ_SRCS_tuning_db := gen/tuning_db.c $(FUZZ_SRCS_overrides)
FUZZ_BINS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)
ASAN_BUILD := build-asan
# -O1: the sanitized host code (parsers, planner, runtime) needs no more, and it halves the
# rebuild; generated packs are never instrumented and are shared with the plain build.
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1

# The parsers' objects are instrumented once (fuzzer-no-link) and shared by the targets that
# link them: compiled again for each target (the planner's sources twice, cg_problem.c seven
# times), fuzz-build took 25 CPU-seconds against 12.
$(BUILD)/fuzz/obj/%.o: %.c $(wildcard runtime/*.h gen/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SANITIZERS) -c $< -o $@
define FUZZ_RULE
$(BUILD)/fuzz/fuzz_$(1): tests/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1):%.c=$(BUILD)/fuzz/obj/%.o)
	@mkdir -p $$(dir $$@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SANITIZERS) $$^ -o $$@ -lcjson -lm
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_RULE,$(t))))

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@bash tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-regress: fuzz-build
	@bash tests/fuzz/run.sh $(BUILD)/fuzz 0 $(FUZZ_TARGETS)

test-bins: $(TEST_BINS)

# Rewrites tests/golden/src from the current templates and emitters (review the diff that
# tests/test_golden.sh printed first).
golden: all
	@bash tests/test_golden.sh --update
.SECONDARY: $(TEST_SUPPORT_OBJS)

# ASAN_ONLY=NAMES runs only those sanitized tests, ASAN_SKIP=NAMES all but those
ASAN_RUNS = $(filter-out $(ASAN_SKIP:%=$(ASAN_BUILD)/tests/%),\
  $(if $(ASAN_ONLY),$(ASAN_ONLY:%=$(ASAN_BUILD)/tests/%),$(TEST_BINS:$(BUILD)/%=$(ASAN_BUILD)/%)))
test-asan:
	@$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) EXTRA_CFLAGS="$(ASAN_FLAGS)" \
	  EXTRA_LDFLAGS="$(ASAN_FLAGS)" $(ASAN_BUILD)/convgrad test-bins
	@export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 CONVGRAD_ASAN=1 \
	  CONVGRAD_TEST_PACKS=$(CURDIR)/$(BUILD)/test-packs; \
	  failed=0; for t in $(ASAN_RUNS); do \
	    echo "test-asan: $$t"; leaks=1; \
	    case $$t in */test_vulkan|*/test_cpu_kernels) leaks=0;; esac; \
	    ASAN_OPTIONS=detect_leaks=$$leaks:abort_on_error=0:strict_string_checks=1 $$t \
	      || { echo "test-asan: FAIL $$t"; failed=1; }; \
	  done; exit $$failed
# Leak checking is off for test_vulkan: Mesa's lavapipe JIT-compiles shaders with LLVM
# and keeps process-lifetime allocations whose stacks end in JIT code ("<unknown module>"),
# which no suppression can name. Address and undefined-behaviour checks stay on there, and the
# other tests run with leak checking (tests/lsan.supp names third-party libraries only).
# Leak checking is off for test_cpu_kernels too: at the exit of that test (thousands of kernels
# loaded from one pack) LeakSanitizer's own stop-the-world tracer crashes about one run in
# four ("Tracer caught signal 11"), a tool failure rather than a finding. The code it drives
# (plan, emit, pack build, load, run) is leak-checked by test_api_threads and test_plan.

# packs, install, C API example
#   make packs                 build every configs/packs/*.json into out/packs/<name>/ + .tar.gz
#                              (PACK_TARGETS=cpu,vulkan to add the shaders; default cpu)
#   make install PREFIX=DIR    bin/convgrad, lib/libconvgrad.{a,so}, include/convgrad/,
#                              lib/pkgconfig/convgrad.pc, share/convgrad/templates
PACK_CONFIGS := $(sort $(wildcard configs/packs/*.json))
PACK_TARGETS ?= cpu
CG_VERSION := $(shell sed -n 's/^\#define CG_GENERATOR_VERSION "\(.*\)"/\1/p' runtime/cg_abi.h)

packs: $(BUILD)/convgrad
	@mkdir -p out/packs
	@for config in $(PACK_CONFIGS); do name=$$(basename $$config .json); \
	  echo "packs: $$name ($(PACK_TARGETS))"; \
	  $(BUILD)/convgrad gen $$config -o out/packs/$$name --target $(PACK_TARGETS) --build || exit 1; \
	  tar czf out/packs/$$name.tar.gz --exclude=$$name/obj -C out/packs $$name || exit 1; \
	done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/include/convgrad $(DESTDIR)$(PREFIX)/share/convgrad
	install -m 755 $(BUILD)/convgrad $(DESTDIR)$(PREFIX)/bin/convgrad
	install -m 644 $(BUILD)/libconvgrad.a $(DESTDIR)$(PREFIX)/lib/libconvgrad.a
	install -m 755 $(BUILD)/libconvgrad.so $(DESTDIR)$(PREFIX)/lib/libconvgrad.so
	install -m 644 runtime/convgrad.h runtime/cg_abi.h runtime/cg_problem.h \
	  $(DESTDIR)$(PREFIX)/include/convgrad/
	rm -rf $(DESTDIR)$(PREFIX)/share/convgrad/templates
	cp -R templates $(DESTDIR)$(PREFIX)/share/convgrad/templates
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: convgrad' 'Description: runtime for convgrad convolution-gradient kernel packs' \
	  'Version: $(CG_VERSION)' \
	  'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lconvgrad -lcjson -ldl -lm -fopenmp' \
	  'Cflags: -I$${includedir}/convgrad' > $(DESTDIR)$(PREFIX)/lib/pkgconfig/convgrad.pc
