# pathd build.
#
#   make            build everything into build/ (release, -O2, -Werror)
#   make test       build and run every test suite, then again with ASan+UBSan,
#                   then the server and integration suites under TSan
#   make test-tsan  only the ThreadSanitizer part
#   make run        build and start the server on 127.0.0.1:8080 with demo maps
#   make bench      pathd-bench over every shared Moving AI scenario
#   make fuzz       libFuzzer over every client input reader (FUZZ_SECONDS)
#   make deps       install the missing Debian packages
#
# Variants build into their own folder: release into build/, the sanitizer
# variants into build/asan/ and build/tsan/. Source files are found by wildcard, so a new
# core/foo.c or tests/test_foo.c needs no Makefile change.

PKGS := libmicrohttpd libcjson libuv check nettle
DEBS := libmicrohttpd-dev libcjson-dev libuv1-dev check pkg-config nettle-dev
# Reference data, read in place; never copied into the repository.
PATHD_BENCH_DIR ?= $(abspath $(CURDIR)/../shared/benchmarks/movingai)
export PATHD_BENCH_DIR

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
HAVE_DEPS := $(shell command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $(PKGS) && echo 1)

.PHONY: all test test-run test-tsan test-tsan-run run bench bench-http bench-wrk fuzz deps js-deps tool-deps fuzz-deps clean format-check format

ifneq ($(HAVE_DEPS),1)
# Install what pkg-config cannot find, then run the same target again with the
# flags pkg-config now gives.
all test run bench bench-http bench-wrk fuzz test-run test-tsan test-tsan-run: deps
	@$(MAKE) --no-print-directory $@
else

VARIANT ?= release
ifeq ($(VARIANT),asan)
OUT := build/asan
OPTFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
else ifeq ($(VARIANT),tsan)
# -mpopcnt on x86-64: core/dstar.c's target_clones resolvers (ifuncs) run
# before the TSan runtime is up and crash the instrumented binary; with the
# instruction in the baseline there are no clones.
OUT := build/tsan
OPTFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread $(if $(filter x86_64,$(shell uname -m)),-mpopcnt)
else
OUT := build
OPTFLAGS := -O2 -g
endif

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Icore -Iproto -Iserver -Iloadtest
CFLAGS ?=
override CFLAGS := $(WARN) $(OPTFLAGS) $(CFLAGS)
LDFLAGS_SAN := $(filter -fsanitize=%,$(OPTFLAGS))
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
LIBS := $(shell pkg-config --libs libmicrohttpd libcjson libuv nettle) -lpthread -lm
CHECK_LIBS := $(shell pkg-config --libs check)

CORE_SRC := $(wildcard core/*.c)
PROTO_SRC := $(wildcard proto/*.c)
SERVER_SRC := $(filter-out server/main.c,$(wildcard server/*.c))
LOADTEST_SRC := $(filter-out loadtest/main.c,$(wildcard loadtest/*.c))
TEST_SRC := $(wildcard tests/test_*.c)
TEST_SUPPORT_SRC := $(filter-out tests/test_%.c tests/fuzz_%.c,$(wildcard tests/*.c))

obj = $(patsubst %.c,$(OUT)/obj/%.o,$(1))
CORE_OBJ := $(call obj,$(CORE_SRC))
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

$(PATHD): $(call obj,server/main.c) $(SERVER_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(LDFLAGS_SAN)

$(BENCH): $(call obj,loadtest/main.c) $(LOADTEST_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(LDFLAGS_SAN)

# One runner for every suite: tests/test_<m>.c defines `Suite *<m>_suite(void)`.
$(SUITES_H): $(TEST_SRC) Makefile
	@mkdir -p $(dir $@)
	@{ for f in $(sort $(TEST_SRC)); do b=$${f#tests/test_}; echo "PF_SUITE($${b%.c})"; done; } > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(call obj,tests/run_tests.c): $(SUITES_H)
$(call obj,tests/run_tests.c): CPPFLAGS += -I$(OUT)/tests

$(TESTS): $(TEST_OBJ) $(SERVER_OBJ) $(LOADTEST_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(CHECK_LIBS) $(LIBS) $(LDFLAGS_SAN)

# Runs the suites of this variant. The integration suites find the server
# binary through PATHD_BIN.
# Check's per-test timeouts are scaled for the sanitizer builds, which run
# several times slower (CK_TIMEOUT_MULTIPLIER from the environment wins).
TIMEOUT_MULT := $(if $(filter release,$(VARIANT)),1,3)
test-run: $(PATHD) $(BENCH) $(TESTS) js-deps
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-$(TIMEOUT_MULT)} \
	PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) $(TESTS)

test: test-run
	@echo "== sanitizer run (ASan + UBSan) =="
	@$(MAKE) --no-print-directory VARIANT=asan test-run
	@echo "== sanitizer run (TSan) =="
	@$(MAKE) --no-print-directory VARIANT=tsan test-tsan-run

# ThreadSanitizer over the suites that run threads: the server's modules
# (pool, registry, cache, sessions, store, WebSocket framing) and the
# integration suites, whose pathd children are the TSan build too (PATHD_BIN)
# and race every route against each other (test_concurrency.c). Every report
# of every process goes to $(TSAN_LOG_DIR); one report fails the target. The
# core algorithm suites are single-threaded and left to the other variants.
TSAN_SUITES := server store ws viewer http sessions stream concurrency
TSAN_LOG_DIR := $(abspath build/tsan/reports)
test-tsan:
	@$(MAKE) --no-print-directory VARIANT=tsan test-tsan-run

test-tsan-run: $(PATHD) $(BENCH) $(TESTS) js-deps
	@rm -rf $(TSAN_LOG_DIR) && mkdir -p $(TSAN_LOG_DIR)
	@rc=0; for s in $(TSAN_SUITES); do \
	  echo "== TSan: suite $$s =="; \
	  CK_RUN_SUITE=$$s TSAN_OPTIONS="log_path=$(TSAN_LOG_DIR)/tsan second_deadlock_stack=1" \
	    PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) $(TESTS) || rc=1; \
	done; \
	n=$$(cat $(TSAN_LOG_DIR)/tsan.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer'); \
	echo "== TSan reports: $$n (logs in $(TSAN_LOG_DIR)) =="; \
	if [ "$$n" != 0 ]; then cat $(TSAN_LOG_DIR)/tsan.*; rc=1; fi; exit $$rc

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
FORMAT_SRC = $(wildcard core/*.[ch] proto/*.[ch] server/*.[ch] loadtest/*.[ch] tests/*.[ch])
format-check:
	@command -v clang-format >/dev/null 2>&1 || { echo "Installing Debian packages: clang-format"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends clang-format; }
	clang-format --dry-run -Werror $(FORMAT_SRC)

format:
	clang-format -i $(FORMAT_SRC)

clean:
	rm -rf build
