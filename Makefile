# pathd build.
#
#   make            build everything into build/ (release, -O2, -Werror)
#   make test       build and run every test suite, then again with ASan+UBSan
#   make run        build and start the server on 127.0.0.1:8080 with demo maps
#   make bench      pathd-bench over every shared Moving AI scenario
#   make fuzz       libFuzzer over every client input reader (FUZZ_SECONDS)
#   make deps       install the missing Debian packages
#
# Variants build into their own folder: release into build/, the sanitizer
# variant into build/asan/. Source files are found by wildcard, so a new
# core/foo.c or tests/test_foo.c needs no Makefile change.

PKGS := libmicrohttpd libcjson libuv check nettle
DEBS := libmicrohttpd-dev libcjson-dev libuv1-dev check pkg-config nettle-dev librecast-dev g++
# Recast/Detour (navmesh maps, nav/) has no pkg-config file: found by header.
RECAST_INC := /usr/include/recastnavigation
# Reference data, read in place; never copied into the repository.
PATHD_BENCH_DIR ?= $(abspath $(CURDIR)/../shared/benchmarks/movingai)
export PATHD_BENCH_DIR

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
HAVE_DEPS := $(shell command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $(PKGS) && \
               [ -f $(RECAST_INC)/DetourTileCache.h ] && command -v $(CXX) >/dev/null 2>&1 && echo 1)

.PHONY: all test test-run run bench bench-http bench-wrk fuzz deps js-deps tool-deps fuzz-deps clean format-check format

ifneq ($(HAVE_DEPS),1)
# Install what pkg-config cannot find, then run the same target again with the
# flags pkg-config now gives.
all test run bench bench-http bench-wrk fuzz test-run: deps
	@$(MAKE) --no-print-directory $@
else

VARIANT ?= release
ifeq ($(VARIANT),asan)
OUT := build/asan
OPTFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
else
OUT := build
OPTFLAGS := -O2 -g
endif

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Icore -Inav -Iproto -Iserver -Iloadtest
CFLAGS ?=
override CFLAGS := $(WARN) $(OPTFLAGS) $(CFLAGS)
# The one C++ file, nav/navmesh.cpp: C style, no exceptions, no RTTI.
CXXWARN := -std=c++11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -fno-exceptions -fno-rtti
CXXFLAGS ?=
override CXXFLAGS := $(CXXWARN) $(OPTFLAGS) $(CXXFLAGS)
LDFLAGS_SAN := $(filter -fsanitize=%,$(OPTFLAGS))
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
LIBS := $(shell pkg-config --libs libmicrohttpd libcjson libuv nettle) -lpthread -lm
CHECK_LIBS := $(shell pkg-config --libs check)
# Only what links nav/ gets Recast/Detour and the C++ runtime.
NAV_LIBS := -lDetourCrowd -lDetourTileCache -lDetour -lRecast -lstdc++

CORE_SRC := $(wildcard core/*.c)
PROTO_SRC := $(wildcard proto/*.c)
NAV_SRC := $(wildcard nav/*.c) $(wildcard nav/*.cpp)
SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c))
LOADTEST_SRC := $(filter-out loadtest/main.c,$(wildcard loadtest/*.c))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_SUPPORT_SRC := $(filter-out tests/test_%.c tests/fuzz_%.c,$(wildcard tests/*.c))

obj = $(patsubst %.cpp,$(OUT)/obj/%.o,$(patsubst %.c,$(OUT)/obj/%.o,$(1)))
CORE_OBJ := $(call obj,$(CORE_SRC))
NAV_OBJ := $(call obj,$(NAV_SRC))
PROTO_OBJ := $(call obj,$(PROTO_SRC))
# server/viewer.html (GET /) is compiled in as a byte array.
VIEWER_OBJ := $(OUT)/obj/gen/viewer_html.o
SERVER_OBJ := $(call obj,$(SERVER_SRC)) $(VIEWER_OBJ)
LOADTEST_OBJ := $(call obj,$(LOADTEST_SRC))
TEST_OBJ := $(call obj,$(TEST_SRC) $(TEST_SUPPORT_SRC))

PATHD := $(OUT)/pathd
BENCH := $(OUT)/pathd-bench
TESTS := $(OUT)/tests/run_tests
SUITES_H := $(OUT)/tests/suites.h

all: $(PATHD) $(BENCH) $(TESTS)

$(OUT)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CPPFLAGS) -isystem $(RECAST_INC) $(CXXFLAGS) -MMD -MP -c $< -o $@

$(OUT)/gen/viewer_html.c: server/viewer.html
	@mkdir -p $(dir $@)
	@{ echo '/* Generated from server/viewer.html by the Makefile. */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const unsigned char pf_viewer_html[];'; \
	  echo 'extern const size_t pf_viewer_html_len;'; \
	  echo 'const unsigned char pf_viewer_html[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '0};'; \
	  echo 'const size_t pf_viewer_html_len = sizeof(pf_viewer_html) - 1;'; } > $@

$(VIEWER_OBJ): $(OUT)/gen/viewer_html.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/libpathd_core.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(OUT)/libpathd_nav.a: $(NAV_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(PATHD): $(call obj,server/main.c) $(SERVER_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(LDFLAGS_SAN)

$(BENCH): $(call obj,loadtest/main.c) $(LOADTEST_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_nav.a \
          $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

# One runner for every suite: tests/test_<m>.c defines `Suite *<m>_suite(void)`.
$(SUITES_H): $(TEST_SRC) Makefile
	@mkdir -p $(dir $@)
	@{ for f in $(sort $(TEST_SRC)); do b=$${f#tests/test_}; echo "PF_SUITE($${b%.c})"; done; } > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(call obj,tests/run_tests.c): $(SUITES_H)
$(call obj,tests/run_tests.c): CPPFLAGS += -I$(OUT)/tests

$(TESTS): $(TEST_OBJ) $(SERVER_OBJ) $(LOADTEST_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_nav.a \
          $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(CHECK_LIBS) $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

# Runs the suites of this variant. The integration suites find the server
# binary through PATHD_BIN.
test-run: $(PATHD) $(BENCH) $(TESTS) js-deps
	PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) $(TESTS)

test: test-run
	@echo "== sanitizer run (ASan + UBSan) =="
	@$(MAKE) --no-print-directory VARIANT=asan test-run

run: $(PATHD)
	./scripts/run-demo.sh $(PATHD)

bench: $(BENCH)
	@if [ ! -d "$(PATHD_BENCH_DIR)" ]; then \
	  echo "bench: skipped: PATHD_BENCH_DIR=$(PATHD_BENCH_DIR) does not exist"; exit 0; fi; \
	for a in astar dijkstra jps hpa; do \
	  $(BENCH) scen --algorithm $$a $(PATHD_BENCH_DIR)/*.scen; rc=$$?; \
	  if [ $$rc = 3 ]; then echo "bench: $$a skipped: not available in this build"; \
	  elif [ $$rc != 0 ]; then exit $$rc; fi; done

bench-http: $(PATHD) $(BENCH)
	./scripts/bench-http.sh $(PATHD) $(BENCH)

# Issue 5's throughput target: wrk on /healthz and on HPA* paths, side by
# side (scripts/bench-wrk.sh documents its settings: MAP, CACHE, ...).
bench-wrk: $(PATHD) tool-deps
	./scripts/bench-wrk.sh $(PATHD)

# libFuzzer (clang, ASan, UBSan) over tests/fuzz_inputs.c: every reader of
# client input, and searches on every map that parses. Runs FUZZ_SECONDS;
# the corpus grows in build/fuzz/corpus from tests/fuzz_seeds.
FUZZ_SECONDS ?= 60
FUZZ_BIN := build/fuzz/fuzz_inputs
FUZZ_SRC := tests/fuzz_inputs.c $(CORE_SRC) $(PROTO_SRC) server/ws.c server/store.c server/router.c

$(FUZZ_BIN): $(FUZZ_SRC) $(wildcard core/*.h proto/*.h server/*.h) | fuzz-deps
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(PKG_CFLAGS) -std=c11 -g -O1 -fno-omit-frame-pointer \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(FUZZ_SRC) -o $@ $(LIBS)

fuzz: $(FUZZ_BIN)
	@mkdir -p build/fuzz/corpus
	$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
	  -dict=tests/fuzz.dict -print_final_stats=1 build/fuzz/corpus tests/fuzz_seeds

-include $(shell find build -name '*.d' 2>/dev/null)
endif

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
fuzz-deps:
	@if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
	    clang -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1; then \
	  echo "Installing Debian packages: clang libclang-rt-14-dev"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev; \
	fi

# The npm `ws` package, an independent WebSocket client for the sessions
# suite (tests/js, pinned by package-lock.json). Without node/npm, or
# without the registry, that one test prints SKIPPED.
js-deps:
	@if [ ! -d tests/js/node_modules/ws ]; then \
	  if ! command -v npm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then \
	    echo "Installing Debian packages: nodejs npm"; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends nodejs npm \
	      || echo "js-deps: could not install nodejs/npm"; \
	  fi; \
	  if command -v npm >/dev/null 2>&1; then \
	    npm ci --prefix tests/js --no-audit --no-fund --loglevel=error || \
	      echo "js-deps: npm ci failed; the npm ws interop test will be SKIPPED"; \
	  else echo "js-deps: npm not found; the npm ws interop test will be SKIPPED"; fi; \
	fi

# The load tools the wrk benchmarks drive (Debian packages wrk and curl).
tool-deps:
	@missing=""; for t in wrk curl; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

deps:
	@missing=""; \
	for p in $(PKGS); do command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $$p || missing=1; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages: $(DEBS)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(DEBS); \
	fi

# Every C source of the tree against .clang-format (Debian clang-format 14,
# installed when missing). .ci/run runs it.
FORMAT_SRC = $(wildcard core/*.[ch] nav/*.[ch] nav/*.cpp proto/*.[ch] server/*.[ch] loadtest/*.[ch] tests/*.[ch])
format-check:
	@command -v clang-format >/dev/null 2>&1 || { echo "Installing Debian packages: clang-format"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends clang-format; }
	clang-format --dry-run -Werror $(FORMAT_SRC)

format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build
