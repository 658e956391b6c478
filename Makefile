# pathd build.
#
#   make            build everything into build/ (release, -O2, -Werror)
#   make test       lint the spec, run every test suite (answers checked against the
#                   spec, /metrics through promtool), the clients' tests, the viewer
#                   in chromium and the README quick start, then the suites and the
#                   C client again with ASan+UBSan, then the server and integration
#                   suites under ThreadSanitizer
#   make test-tsan  only the ThreadSanitizer part
#   make run        build and start the server on 127.0.0.1:8080 with demo maps
#   make bench      pathd-bench over every shared Moving AI scenario
#   make fuzz       libFuzzer over every client input reader (FUZZ_SECONDS)
#   make cppcheck   static analysis of every C source (CI runs it)
#   make format-check  clang-format over every C source (CI runs it)
#   make deps       install the missing Debian packages
#
# Variants build into their own folder: release into build/, the sanitizer
# variants into build/asan/ and build/tsan/. Source files are found by wildcard, so a new
# core/foo.c or tests/test_foo.c needs no Makefile change.

PKGS := libmicrohttpd libcjson libuv check nettle hiredis libcurl
# libcurl: clients/c only (the server never links it). librecast-dev and g++:
# navmesh maps (nav/, the one C++ file set).
DEBS := libmicrohttpd-dev libcjson-dev libuv1-dev check pkg-config nettle-dev libhiredis-dev \
        libcurl4-openssl-dev librecast-dev g++
# Recast/Detour has no pkg-config file: found by header.
RECAST_INC := /usr/include/recastnavigation
# Reference data, read in place; never copied into the repository.
PATHD_BENCH_DIR ?= $(abspath $(CURDIR)/../shared/benchmarks/movingai)
export PATHD_BENCH_DIR

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
HAVE_DEPS := $(shell command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $(PKGS) && \
               [ -f $(RECAST_INC)/DetourTileCache.h ] && command -v $(CXX) >/dev/null 2>&1 && echo 1)

.PHONY: FORCE all test test-run run bench bench-http bench-wrk bench-fleet bench-auth fuzz deps js-deps \
        tool-deps fleet-deps test-tools fuzz-deps clean format-check format cppcheck suites-list spec-deps spec-lint \
        clients-test clients-c-test clients-node-test clients-csharp-test cxx-deps mono-deps node-deps \
        curl-deps first-contact-test promtool-deps viewer-test chromium-deps \
        test-tsan test-tsan-run

ifneq ($(HAVE_DEPS),1)
# Install what pkg-config cannot find, then run the same target again with the
# flags pkg-config now gives.
all test run bench bench-http bench-wrk bench-fleet bench-auth fuzz test-run clients-test clients-c-test clients-node-test \
clients-csharp-test first-contact-test viewer-test test-tsan test-tsan-run: deps
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
CPPFLAGS := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Icore -Inav -Iproto -Iserver -Iloadtest
CFLAGS ?=
override CFLAGS := $(WARN) $(OPTFLAGS) $(CFLAGS)
# The C++ files, nav/*.cpp: C style, no exceptions, no RTTI.
CXXWARN := -std=c++11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -fno-exceptions -fno-rtti
CXXFLAGS ?=
override CXXFLAGS := $(CXXWARN) $(OPTFLAGS) $(CXXFLAGS)
LDFLAGS_SAN := $(filter -fsanitize=%,$(OPTFLAGS))
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
LIBS := $(shell pkg-config --libs libmicrohttpd libcjson libuv nettle hiredis) -lpthread -lm
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
# server/viewer.html (GET /) is compiled in as a byte array; the commit
# the binary is built from goes into pathd_build_info (/metrics).
VIEWER_OBJ := $(OUT)/obj/gen/viewer_html.o
BUILD_INFO_OBJ := $(OUT)/obj/gen/build_info.o
SERVER_OBJ := $(call obj,$(SERVER_SRC)) $(VIEWER_OBJ) $(BUILD_INFO_OBJ)
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

# BUILD_COMMIT overrides git (a build from a tarball or in Docker says
# "unknown" otherwise). Rewritten only when the commit changes.
BUILD_COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
$(OUT)/gen/build_info.c: FORCE
	@mkdir -p $(dir $@)
	@printf '/* Generated by the Makefile. */\nextern const char pf_build_commit[];\nconst char pf_build_commit[] = "%s";\n' \
	  "$$(printf '%s' '$(BUILD_COMMIT)' | tr -cd 'A-Za-z0-9._+-')" > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

$(BUILD_INFO_OBJ): $(OUT)/gen/build_info.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/libpathd_core.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(OUT)/libpathd_nav.a: $(NAV_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(PATHD): $(call obj,server/main.c) $(SERVER_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_nav.a \
          $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

$(BENCH): $(call obj,loadtest/main.c) $(LOADTEST_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_nav.a \
          $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

# One runner for every suite: tests/test_<m>.c defines `Suite *<m>_suite(void)`.
# Rewritten on every run (a deleted suite has no file to be newer than it),
# touched only when the list changes.
$(SUITES_H): suites-list
	@mkdir -p $(dir $@)
	@{ for f in $(sort $(TEST_SRC)); do b=$${f#tests/test_}; echo "PF_SUITE($${b%.c})"; done; } > $@.tmp
	@cmp -s $@.tmp $@ || mv $@.tmp $@; rm -f $@.tmp

suites-list:

$(call obj,tests/run_tests.c): $(SUITES_H)
$(call obj,tests/run_tests.c): CPPFLAGS += -I$(OUT)/tests

$(TESTS): $(TEST_OBJ) $(SERVER_OBJ) $(LOADTEST_OBJ) $(PROTO_OBJ) $(OUT)/libpathd_nav.a \
          $(OUT)/libpathd_core.a
	$(CC) $(CFLAGS) $^ -o $@ $(CHECK_LIBS) $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

# clients/c (see below), built with this variant's flags.
CLIENT_C_WARN := -std=c99 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
                 -Wmissing-prototypes -Wformat=2 -Wvla
CURL_CFLAGS := $(shell pkg-config --cflags libcurl)
CURL_LIBS := $(shell pkg-config --libs libcurl)
CLIENT_C_BINS := $(OUT)/clients/c/test_client $(OUT)/clients/c/example

# Runs the suites of this variant. The integration suites find the server
# binary through PATHD_BIN, and log every answer they receive to
# PATHD_SPEC_LOG, which tests/spec/check-answers.js then holds against
# proto/openapi.yaml (a mismatch fails the run).
# Then the C client's tests (built with this variant's flags, so they run
# under ASan+UBSan too); the Node and C# clients' tests run once, in the
# release pass.
# Check's per-test timeouts are scaled for the sanitizer builds, which run
# several times slower (CK_TIMEOUT_MULTIPLIER from the environment wins).
# The metrics suite saves its last /metrics scrape to METRICS_OUT:
# promtool checks it, and tests/dashboard/check.js holds the Grafana
# dashboard's queries against it.
SPEC_LOG := $(OUT)/spec/answers.log
METRICS_OUT := $(OUT)/metrics/metrics.txt
TIMEOUT_MULT := $(if $(filter release,$(VARIANT)),1,3)
test-run: $(PATHD) $(BENCH) $(TESTS) js-deps fleet-deps spec-deps test-tools $(CLIENT_C_BINS) \
          promtool-deps
	@mkdir -p $(dir $(SPEC_LOG)) $(dir $(METRICS_OUT)) && rm -f $(SPEC_LOG) $(METRICS_OUT)
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-$(TIMEOUT_MULT)} \
	  PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) \
	  PATHD_SPEC_LOG=$(abspath $(SPEC_LOG)) PATHD_METRICS_OUT=$(abspath $(METRICS_OUT)) $(TESTS)
	node tests/spec/check-answers.js proto/openapi.yaml $(SPEC_LOG)
	$(PROMTOOL) check metrics < $(METRICS_OUT)
	node tests/dashboard/check.js deploy/grafana/pathd-dashboard.json $(METRICS_OUT) --promtool $(PROMTOOL)
	@$(MAKE) --no-print-directory clients-c-test
ifeq ($(VARIANT),release)
	@$(MAKE) --no-print-directory clients-node-test clients-csharp-test first-contact-test viewer-test
endif

test: spec-lint test-run
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
TSAN_SUITES := pool registry cache session store maps memory ws http server routes_ops routes_maps \
               routes_fields routes_tables \
               routes_paths routes_sessions routes_crowds crowd stream concurrency
TSAN_LOG_DIR := $(abspath build/tsan/reports)
test-tsan:
	@$(MAKE) --no-print-directory VARIANT=tsan test-tsan-run

test-tsan-run: $(PATHD) $(BENCH) $(TESTS) js-deps
	@rm -rf $(TSAN_LOG_DIR) && mkdir -p $(TSAN_LOG_DIR)
	@rc=0; for s in $(TSAN_SUITES); do \
	  echo "== TSan: suite $$s =="; \
	  CK_RUN_SUITE=$$s CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-3} \
	    TSAN_OPTIONS="log_path=$(TSAN_LOG_DIR)/tsan second_deadlock_stack=1" \
	    PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) $(TESTS) || rc=1; \
	done; \
	n=$$(cat $(TSAN_LOG_DIR)/tsan.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer'); \
	echo "== TSan reports: $$n (logs in $(TSAN_LOG_DIR)) =="; \
	if [ "$$n" != 0 ]; then cat $(TSAN_LOG_DIR)/tsan.*; rc=1; fi; exit $$rc

# ---- clients (clients/README.md) ----
# Each client's own tests start their own pathd ($(PATHD)) on free loopback
# ports and run every wrapper against it, the example included.

# clients/c: C99 and libcurl; also compiled once as C++ (Unreal builds .c
# files as C++).

$(OUT)/clients/c/%: clients/c/%.c clients/c/pathd.c clients/c/pathd.h
	@mkdir -p $(dir $@)
	$(CC) $(CLIENT_C_WARN) $(OPTFLAGS) $(CURL_CFLAGS) clients/c/$*.c clients/c/pathd.c -o $@ \
	  $(CURL_LIBS) -lpthread -lm $(LDFLAGS_SAN)

clients-c-test: $(PATHD) $(CLIENT_C_BINS) cxx-deps
	g++ -x c++ -std=c++11 -Wall -Wextra -Werror $(CURL_CFLAGS) -c clients/c/pathd.c \
	  -o $(OUT)/clients/c/pathd_cxx.o
	PATHD_BIN=$(abspath $(PATHD)) $(OUT)/clients/c/test_client $(OUT)/clients/c/example

# clients/node: TypeScript (tsc) over ws, tested with node's test runner;
# npm ci whenever the lock file changes.
NODE_CLIENT_STAMP := clients/node/node_modules/.installed
$(NODE_CLIENT_STAMP): clients/node/package.json clients/node/package-lock.json | node-deps
	npm ci --prefix clients/node --no-audit --no-fund --loglevel=error
	@touch $@

clients-node-test: $(PATHD) $(NODE_CLIENT_STAMP)
	cd clients/node && node_modules/.bin/tsc -p tsconfig.json
	cd clients/node && PATHD_BIN=$(abspath $(PATHD)) node --test test/

# clients/csharp: Debian's mono (mcs, C# 7.2), the .NET Standard 2.0 API.
CS_OUT := build/clients/csharp
CS_FLAGS := -langversion:7.2 -warnaserror+ -r:System.Net.Http.dll
$(CS_OUT)/Pathd.dll: clients/csharp/Pathd.cs | mono-deps
	@mkdir -p $(dir $@)
	mcs $(CS_FLAGS) -target:library -out:$@ $<
$(CS_OUT)/tests.exe: clients/csharp/Tests.cs $(CS_OUT)/Pathd.dll
	mcs $(CS_FLAGS) -r:System.Core.dll -r:$(CS_OUT)/Pathd.dll -out:$@ $<
$(CS_OUT)/example.exe: clients/csharp/Example.cs $(CS_OUT)/Pathd.dll
	mcs $(CS_FLAGS) -r:$(CS_OUT)/Pathd.dll -out:$@ $<

clients-csharp-test: $(PATHD) $(CS_OUT)/tests.exe $(CS_OUT)/example.exe
	MONO_PATH=$(abspath $(CS_OUT)) PATHD_BIN=$(abspath $(PATHD)) mono $(CS_OUT)/tests.exe $(CS_OUT)/example.exe

clients-test: clients-c-test clients-node-test clients-csharp-test

# The README's quick start, line by line, against a fresh server; the
# Dockerfile's HEALTHCHECK command against a real pathd, its STOPSIGNAL and
# stop timeout (Docker itself cannot run here).
first-contact-test: $(PATHD) curl-deps
	tests/quickstart.sh $(PATHD)
	tests/dockerfile.sh $(PATHD)

# The viewer (GET /) in a real browser: tests/browser/viewer.test.js drives
# Debian's chromium with playwright-core (npm, pinned by its package-lock;
# it never downloads a browser of its own) against a fresh pathd.
# Screenshots and the frame times it measures go to build/browser/.
BROWSER_STAMP := tests/browser/node_modules/.installed
$(BROWSER_STAMP): tests/browser/package.json tests/browser/package-lock.json | node-deps
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
	@touch $@

viewer-test: $(PATHD) $(BROWSER_STAMP) chromium-deps
	@mkdir -p build/browser
	PATHD_BIN=$(abspath $(PATHD)) CHROMIUM=/usr/bin/chromium BROWSER_ARTIFACTS=$(abspath build/browser) \
	  node --test tests/browser/

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

# What one bearer-token check costs (scripts/bench-auth.c).
bench-auth: $(OUT)/bench-auth
	$(OUT)/bench-auth

$(OUT)/bench-auth: scripts/bench-auth.c server/auth.c server/auth.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) scripts/bench-auth.c server/auth.c -o $@ $(LIBS) $(LDFLAGS_SAN)

# Issue 5's throughput target: wrk on /healthz and on HPA* paths, side by
# side (scripts/bench-wrk.sh documents its settings: MAP, CACHE, ...).
bench-wrk: $(PATHD) tool-deps
	./scripts/bench-wrk.sh $(PATHD)

# Issue 16's fleet numbers: path req/s through nginx (deploy/nginx.conf) in
# front of 1, 2 and 3 instances sharing one Redis, and kill-to-first-200
# (scripts/bench-fleet.sh documents MAP, MAPS, DURATION, ...).
bench-fleet: $(PATHD) tool-deps fleet-deps
	./scripts/bench-fleet.sh $(PATHD)

# libFuzzer (clang, ASan, UBSan) over tests/fuzz_inputs.c: every reader of
# client input, and searches on every map that parses. Runs FUZZ_SECONDS;
# the corpus grows in build/fuzz/corpus from tests/fuzz_seeds.
FUZZ_SECONDS ?= 60
FUZZ_BIN := build/fuzz/fuzz_inputs
# proto/nav_info.c reads navmesh versions (the C++ shim): not in the fuzz
# build, which links no C++; the OBJ reader and the navmesh defaults are C.
FUZZ_SRC := tests/fuzz_inputs.c $(CORE_SRC) $(filter-out proto/nav_info.c,$(PROTO_SRC)) \
            nav/obj.c nav/navconf.c server/ws.c server/store.c server/router.c \
            server/auth.c server/http_strict.c server/guard.c server/config.c

$(FUZZ_BIN): $(FUZZ_SRC) $(wildcard core/*.h nav/*.h proto/*.h server/*.h) | fuzz-deps
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

# What the TLS tests run: openssl makes a certificate, curl speaks HTTPS
# to the server (Debian packages openssl and curl).
test-tools:
	@missing=""; for t in openssl curl; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The spec's tools (tests/spec, pinned by package-lock.json): @redocly/cli
# lints proto/openapi.yaml, ajv validates the suites' answers against it.
# Installed with npm ci whenever the lock file changes; not optional, so a
# machine without node and npm gets Debian's. @redocly/cli 2 needs
# Node >= 20.19.
SPEC_STAMP := tests/spec/node_modules/.installed
spec-deps: $(SPEC_STAMP)
$(SPEC_STAMP): tests/spec/package.json tests/spec/package-lock.json | node-deps
	@node -e 'const [a, b] = process.versions.node.split(".").map(Number); if (a < 20 || (a === 20 && b < 19)) { console.error("spec-deps: @redocly/cli needs Node >= 20.19, this is " + process.version); process.exit(1); }'
	npm ci --prefix tests/spec --no-audit --no-fund --loglevel=error
	@touch $@

# proto/openapi.yaml against @redocly/cli's recommended-strict rules
# (tests/spec/redocly.yaml; the warnings that are right for this API, with
# reasons, in tests/spec/.redocly.lint-ignore.yaml). Any problem fails.
# Then the spec's operations against the server's route table
# (server/routes.h: paths, methods, bodies, scopes).
spec-lint: spec-deps
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
	  tests/spec/node_modules/.bin/redocly lint --config tests/spec/redocly.yaml proto/openapi.yaml
	node tests/spec/check-routes.js proto/openapi.yaml server/routes.h

# promtool (Debian package prometheus) for `promtool check metrics`. It is
# the only Debian package that ships promtool; installing it would also
# install and start a Prometheus server, so unless promtool is on the PATH
# the package is fetched with `apt-get download` and only unpacked into
# build/tools (no root needed, nothing started).
PROMTOOL_LOCAL := build/tools/prometheus/usr/bin/promtool
PROMTOOL := $(or $(shell command -v promtool 2>/dev/null),$(PROMTOOL_LOCAL))
promtool-deps: $(PROMTOOL)
$(PROMTOOL_LOCAL):
	@rm -rf build/tools/deb && mkdir -p build/tools/deb
	cd build/tools/deb && { apt-get download prometheus 2>/dev/null || \
	  { $(SUDO) apt-get update -qq && apt-get download prometheus; }; }
	mkdir -p build/tools/prometheus && dpkg-deb --fsys-tarfile build/tools/deb/prometheus_*.deb | \
	  tar -x -C build/tools/prometheus ./usr/bin/promtool
	@rm -rf build/tools/deb
	@test -x $@ && touch $@

# node and npm for the spec tools and clients/node (Debian's when missing).
node-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
	  echo "Installing Debian packages: nodejs npm"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends nodejs npm; \
	fi

# Debian's chromium for the viewer test.
chromium-deps:
	@[ -x /usr/bin/chromium ] || { echo "Installing Debian packages: chromium"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium; }

# curl for the README quick start check.
curl-deps:
	@command -v curl >/dev/null 2>&1 || { echo "Installing Debian packages: curl"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends curl; }

# g++ compiles clients/c/pathd.c as C++ once.
cxx-deps:
	@command -v g++ >/dev/null 2>&1 || { echo "Installing Debian packages: g++"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends g++; }

# mono for clients/csharp: the compiler, the runtime and System.Net.Http.
MONO_DEBS := mono-mcs mono-runtime libmono-system-net-http4.0-cil
mono-deps:
	@if ! command -v mcs >/dev/null 2>&1 || ! command -v mono >/dev/null 2>&1 || \
	    [ ! -e /usr/lib/mono/4.5/System.Net.Http.dll ]; then \
	  echo "Installing Debian packages: $(MONO_DEBS)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(MONO_DEBS); \
	fi

# The real components the fleet suite (tests/test_fleet.c) starts on
# loopback ports: redis-server and nginx; haproxy checks deploy/haproxy.cfg
# (Debian packages redis-server, nginx, haproxy).
fleet-deps:
	@missing=""; for t in redis-server nginx haproxy; do \
	  command -v $$t >/dev/null 2>&1 || [ -x /usr/sbin/$$t ] || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing \
	    || echo "fleet-deps: could not install$$missing; the fleet tests will be SKIPPED (they fail under CI=true)"; \
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
	[ -f $(RECAST_INC)/DetourTileCache.h ] && command -v $(CXX) >/dev/null 2>&1 || missing=1; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages: $(DEBS)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $(DEBS); \
	fi

# Every C source of the tree against .clang-format (Debian clang-format 14,
# installed when missing). .ci/run runs it.
FORMAT_SRC = $(wildcard core/*.[ch] nav/*.[ch] nav/*.cpp proto/*.[ch] server/*.[ch] loadtest/*.[ch] tests/*.[ch] clients/c/*.[ch])
format-check:
	@command -v clang-format >/dev/null 2>&1 || { echo "Installing Debian packages: clang-format"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends clang-format; }
	clang-format --dry-run -Werror $(FORMAT_SRC)

format:
	clang-format -i $(FORMAT_SRC)

# cppcheck (Debian package, installed when missing) over every C source,
# clients/c included:
# errors, warnings, performance and portability findings fail it. Not the
# style class: it would move declarations from the top of their block, which
# the house style keeps there. One suppression: core/jps*'s branch-free
# tests shift negative int32 values right by 31 to make all-ones masks,
# relying on the arithmetic shift gcc and clang define.
CPPCHECK_FLAGS := --quiet --std=c11 --enable=warning,performance,portability --inline-suppr \
                  --error-exitcode=1 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
                  -Icore -Inav -Iproto -Iserver -Iloadtest -Itests \
                  --suppress='shiftTooManyBitsSigned:core/jps*.c'
cppcheck:
	@command -v cppcheck >/dev/null 2>&1 || { echo "Installing Debian packages: cppcheck"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends cppcheck; }
	cppcheck $(CPPCHECK_FLAGS) -Iclients/c core nav/obj.c proto server loadtest tests clients/c

clean:
	rm -rf build
