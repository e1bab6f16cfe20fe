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
GEN_OBJS := $(GEN_SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/abi_text.o
TEST_SUPPORT_OBJS := $(TEST_SUPPORT_SRCS:%.c=$(BUILD)/%.o)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps demo test test-c test-cli test-torch bench clean install
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
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The ABI header's text, embedded in the generator so that packs carry the exact header.
$(BUILD)/gen/abi_text.c: runtime/cg_abi.h
	@mkdir -p $(dir $@)
	@{ echo 'const char cg_abi_header_text[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(BUILD)/gen/abi_text.o: $(BUILD)/gen/abi_text.c
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/convgrad: $(BUILD)/gen/main.o $(GEN_OBJS) $(RUNTIME_OBJS)
	$(CC) $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/libconvgrad.a: $(RUNTIME_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libconvgrad.so: $(RUNTIME_OBJS)
	$(CC) -shared $(ALL_CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT_OBJS) $(GEN_OBJS) $(RUNTIME_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/support $^ -o $@ $(LDLIBS) -lcmocka

demo: deps all
	@bash tests/demo.sh

# The whole suite: C unit tests (cmocka), CLI contract tests, PyTorch cross-check.
test: deps all $(TEST_BINS)
	@bash tests/run_all.sh $(TEST_BINS)

bench: deps all
	@$(MAKE) -C bench run

clean:
	rm -rf $(BUILD)
