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
# RecastDemo's nav_test.obj and its test cases (the navlevels suite, the
# viewer's browser tests).
PATHD_MESH_DIR ?= $(abspath $(CURDIR)/../shared/benchmarks/meshes)
export PATHD_MESH_DIR

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# $(call apt_install,<packages>) in a recipe: installs Debian packages in
# one apt-get run (waiting for another apt-get's lock, since make -j may
# run two), and a failure stops make, naming the command that failed. The
# packages may be a shell variable ($$missing).
define apt_install
set -- $(1); echo "Installing Debian packages: $$*"; \
for c in "$(SUDO) apt-get -o DPkg::Lock::Timeout=600 update -qq" \
  "$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$*"; do \
  $$c || { echo "make $@: this command failed: $$c" >&2; exit 1; }; done
endef
HAVE_DEPS := $(shell command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $(PKGS) && \
               [ -f $(RECAST_INC)/DetourTileCache.h ] && command -v $(CXX) >/dev/null 2>&1 && echo 1)

.PHONY: FORCE all test test-run run bench bench-http bench-navmesh bench-wrk bench-fleet bench-auth bench-json bench-graph bench-viewer bench-viewer-grid fuzz fuzz-replay fuzz-replay-run deps js-deps \
        tool-deps fleet-deps test-tools test-deps fuzz-deps clean format-check format cppcheck suites-list spec-deps spec-lint \
        clients-test clients-c-test clients-node-test clients-csharp-test cxx-deps mono-deps node-deps \
        curl-deps first-contact-test promtool-deps viewer-test chromium-deps \
        test-tsan test-tsan-run

ifneq ($(HAVE_DEPS),1)
# Install what pkg-config cannot find, then run the same target again with the
# flags pkg-config now gives.
all test run bench bench-http bench-navmesh bench-wrk bench-fleet bench-auth bench-json bench-graph bench-viewer bench-viewer-grid fuzz fuzz-replay test-run clients-test clients-c-test clients-node-test \
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
# loadtest/*.cpp: the Detour-direct baseline of pathd-bench navmesh, C++ like nav/.
LOADTEST_SRC := $(filter-out loadtest/main.c,$(wildcard loadtest/*.c)) $(wildcard loadtest/*.cpp)
TEST_SRC := $(wildcard tests/test_*.c)
# tests/*.cpp: the Detour references (detourref.cpp), C++ like nav/.
TEST_SUPPORT_SRC := $(filter-out tests/test_%.c tests/fuzz_%.c,$(wildcard tests/*.c)) \
                    $(wildcard tests/*.cpp)

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

# The page is server/viewer.html with each "<!-- include F -->" line
# replaced by server/F inside a <script>: one self-contained page, nothing
# fetched from elsewhere (docs/viewer.md).
VIEWER_PARTS := server/viewer.html $(wildcard server/viewer_*.js)
$(OUT)/gen/viewer.html: $(VIEWER_PARTS)
	@mkdir -p $(dir $@)
	@awk '/^<!-- include [A-Za-z0-9_.-]+ -->$$/ { f = "server/" $$3; print "<script>"; \
	  while ((getline l < f) > 0) print l; if (close(f) != 0) { print "missing " f > "/dev/stderr"; exit 1 }; \
	  print "</script>"; next } { print }' server/viewer.html > $@.tmp && mv $@.tmp $@

$(OUT)/gen/viewer_html.c: $(OUT)/gen/viewer.html
	@mkdir -p $(dir $@)
	@{ echo '/* Generated from server/viewer.html (and its scripts) by the Makefile. */'; \
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

# Made anew each time: `ar rcs` never drops a member, so an object whose
# source was removed (nav/navmesh.cpp, split) would stay and be linked.
$(OUT)/libpathd_core.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	$(AR) rcs $@ $^

# Made afresh: ar would keep the members of files since removed.
$(OUT)/libpathd_nav.a: $(NAV_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
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

# Runs the suites of this variant side by side (tests/run-suites.sh: one
# runner process a suite, TEST_JOBS at a time, the longest first; every
# server on its own port). The integration suites find the server binary
# through PATHD_BIN, and log every answer they receive to PATHD_SPEC_LOG,
# which tests/spec/check-answers.js then holds against proto/openapi.yaml
# (a mismatch fails the run).
# Then the C client's tests (built with this variant's flags, so they run
# under ASan+UBSan too); the Node and C# clients' tests, the README quick
# start and the viewer in chromium run once, in the release pass, side by
# side (each starts its own pathd on port 0).
# Check's per-test timeouts only stop a hang: no test asserts on elapsed
# time, so they are generous. Each is scaled by TIMEOUT_MULT (4 for release,
# 8 for the sanitizer builds, which run several times slower;
# CK_TIMEOUT_MULTIPLIER from the environment wins), and a test case that
# sets no timeout gets CK_DEFAULT_TIMEOUT (60 s here, Check's own is 4 s).
# A 2-core machine running two suites side by side beside other work (a
# load average of 30 was seen) made a 20 s x 1 guard expire on a correct
# test (planner, 769c0cd); a hang still fails, only later.
# The metrics suite saves its last /metrics scrape to METRICS_OUT:
# promtool checks it, and tests/dashboard/check.js holds the Grafana
# dashboard's queries against it.
SPEC_LOG := $(OUT)/spec/answers.log
METRICS_OUT := $(OUT)/metrics/metrics.txt
TIMEOUT_MULT := $(if $(filter release,$(VARIANT)),4,8)
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SUITES := $(sort $(patsubst tests/test_%.c,%,$(TEST_SRC)))
# The suites that take longest (measured with make test on 2 cores), started
# first so the short ones fill in at the end; then the rest by name.
SLOW_SUITES := navmesh navlevels routes_navworlds hpa jps routes_paths flowfield concurrency fleet \
               stream routes_maps dstar deadends routes_sessions
SUITE_ORDER := $(filter $(SUITES),$(SLOW_SUITES)) $(filter-out $(SLOW_SUITES),$(SUITES))
test-run: $(PATHD) $(BENCH) $(TESTS) js-deps fleet-deps spec-deps test-tools $(CLIENT_C_BINS) \
          promtool-deps
	@mkdir -p $(dir $(SPEC_LOG)) $(dir $(METRICS_OUT)) && rm -f $(SPEC_LOG) $(METRICS_OUT)
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-$(TIMEOUT_MULT)} CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60} \
	  PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) \
	  PATHD_SPEC_LOG=$(abspath $(SPEC_LOG)) PATHD_METRICS_OUT=$(abspath $(METRICS_OUT)) \
	  tests/run-suites.sh $(TESTS) $(TEST_JOBS) $(SUITE_ORDER)
	node tests/spec/check-answers.js proto/openapi.yaml $(SPEC_LOG)
	$(PROMTOOL) check metrics < $(METRICS_OUT)
	node tests/dashboard/check.js deploy/grafana/pathd-dashboard.json $(METRICS_OUT) --promtool $(PROMTOOL)
	@$(MAKE) --no-print-directory clients-c-test
ifeq ($(VARIANT),release)
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target clients-node-test \
	  clients-csharp-test first-contact-test viewer-test
endif

# Everything make test installs, one install after the other, before
# anything runs in parallel: the Debian packages (apt_install) and the npm
# trees (npm ci).
test-deps:
	@$(MAKE) --no-print-directory node-deps chromium-deps curl-deps cxx-deps test-tools fleet-deps \
	  mono-deps fuzz-deps promtool-deps js-deps spec-deps $(BROWSER_STAMP) $(NODE_CLIENT_STAMP)

# make test: the installs; the release build, the fuzz harness and the
# spec lint side by side; the release suites; the same under ASan+UBSan;
# the TSAN_SUITES under ThreadSanitizer. Each build uses TEST_JOBS cores.
test: test-deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target spec-lint fuzz-replay \
	  $(PATHD) $(BENCH) $(TESTS) $(CLIENT_C_BINS)
	@$(MAKE) --no-print-directory test-run
	@echo "== sanitizer run (ASan + UBSan) =="
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) VARIANT=asan build/asan/pathd build/asan/pathd-bench \
	  build/asan/tests/run_tests $(patsubst build/%,build/asan/%,$(CLIENT_C_BINS))
	@$(MAKE) --no-print-directory VARIANT=asan test-run
	@echo "== sanitizer run (TSan) =="
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) VARIANT=tsan build/tsan/pathd build/tsan/pathd-bench \
	  build/tsan/tests/run_tests
	@$(MAKE) --no-print-directory VARIANT=tsan test-tsan-run

# ThreadSanitizer over every suite that starts a thread, in its own process
# or in the pathd (and pathd-bench) children it starts, which are the TSan
# build too (PATHD_BIN, PATHD_BENCH_BIN). TSAN_INPROC start threads in the
# test process: agents (lazy agent grids from 4 threads), auth (token table
# reloads against checkers), concurrency (its client threads), fleet (PATCH
# and load racers), navmesh (parallel tile builds, queries across versions
# while new ones are made), pool. TSAN_SERVER start pathd or pathd-bench:
# every route, the SIGHUP token reload under load (guard), the Redis
# follower applying changes while queries run (fleet), streams and crowds.
# The other suites start no thread anywhere: the code they run (core/,
# proto/, nav/ without a runner, and the server modules registry, cache,
# session, memory, ws, crowd, maps without Redis) creates none (only pool,
# conns, stream, server and maps_shared do), and strace -f of each counted
# no clone with CLONE_THREAD; they run under the release and ASan builds.
# Every report of every process goes to $(TSAN_LOG_DIR); one report fails
# the target.
TSAN_INPROC := agents auth concurrency fleet navmesh pool
TSAN_SERVER := bench concurrency config fleet guard http http_strict metrics routes_crowds routes_graphs \
               routes_graph_export \
               routes_fields routes_maps routes_ops routes_paths routes_sessions routes_tables server \
               store stream
# Graph sessions (issue 28/29): appended here so the lists above merge cleanly.
TSAN_SERVER += routes_graph_sessions
TSAN_SERVER += routes_graph_doors
TSAN_SERVER += routes_graph_link
TSAN_ALL := $(sort $(TSAN_INPROC) $(TSAN_SERVER))
TSAN_SUITES := $(filter $(TSAN_ALL),$(SLOW_SUITES)) $(filter-out $(SLOW_SUITES),$(TSAN_ALL))
TSAN_LOG_DIR := $(abspath build/tsan/reports)
test-tsan:
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) VARIANT=tsan build/tsan/pathd build/tsan/pathd-bench \
	  build/tsan/tests/run_tests
	@$(MAKE) --no-print-directory VARIANT=tsan test-tsan-run

test-tsan-run: $(PATHD) $(BENCH) $(TESTS) js-deps fleet-deps test-tools
	@rm -rf $(TSAN_LOG_DIR) && mkdir -p $(TSAN_LOG_DIR)
	@rc=0; CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-8} CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-60} \
	  TSAN_OPTIONS="log_path=$(TSAN_LOG_DIR)/tsan second_deadlock_stack=1" \
	  PATHD_BIN=$(abspath $(PATHD)) PATHD_BENCH_BIN=$(abspath $(BENCH)) \
	  tests/run-suites.sh $(TESTS) $(TEST_JOBS) $(TSAN_SUITES) || rc=1; \
	n=$$(cat $(TSAN_LOG_DIR)/tsan.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer'); \
	echo "== TSan reports: $$n (logs in $(TSAN_LOG_DIR)) =="; \
	if [ "$$n" != 0 ]; then cat $(TSAN_LOG_DIR)/tsan.*; rc=1; fi; exit $$rc

# ---- clients (clients/README.md) ----
# Each client's own tests start their own pathd ($(PATHD)) on free loopback
# ports and run every wrapper against it, the example included; their
# fleet test (a change whose outcome is unknown, retried with If-Match)
# starts redis-server too (fleet-deps).

# clients/c: C99 and libcurl; also compiled once as C++ (Unreal builds .c
# files as C++).

$(OUT)/clients/c/%: clients/c/%.c clients/c/pathd.c clients/c/pathd.h
	@mkdir -p $(dir $@)
	$(CC) $(CLIENT_C_WARN) $(OPTFLAGS) $(CURL_CFLAGS) clients/c/$*.c clients/c/pathd.c -o $@ \
	  $(CURL_LIBS) -lpthread -lm $(LDFLAGS_SAN)

clients-c-test: $(PATHD) $(CLIENT_C_BINS) cxx-deps fleet-deps
	g++ -x c++ -std=c++11 -Wall -Wextra -Werror $(CURL_CFLAGS) -c clients/c/pathd.c \
	  -o $(OUT)/clients/c/pathd_cxx.o
	PATHD_BIN=$(abspath $(PATHD)) $(OUT)/clients/c/test_client $(OUT)/clients/c/example

# clients/node: TypeScript (tsc) over ws, tested with node's test runner;
# npm ci whenever the lock file changes.
NODE_CLIENT_STAMP := clients/node/node_modules/.installed
$(NODE_CLIENT_STAMP): clients/node/package.json clients/node/package-lock.json | node-deps
	npm ci --prefix clients/node --no-audit --no-fund --loglevel=error
	@touch $@

clients-node-test: $(PATHD) $(NODE_CLIENT_STAMP) fleet-deps
	cd clients/node && node_modules/.bin/tsc -p tsconfig.json
	cd clients/node && PATHD_BIN=$(abspath $(PATHD)) node --test test/

# clients/csharp: Debian's mono (mcs, C# 7.2), the .NET Standard 2.0 API.
CS_OUT := build/clients/csharp
CS_FLAGS := -langversion:7.2 -warnaserror+ -r:System.Net.Http.dll
$(CS_OUT)/Pathd.dll: clients/csharp/Pathd.cs | mono-deps
	@mkdir -p $(dir $@)
	mcs $(CS_FLAGS) -target:library -out:$@ $<
$(CS_OUT)/tests.exe: clients/csharp/Tests.cs clients/csharp/GraphTests.cs $(CS_OUT)/Pathd.dll
	mcs $(CS_FLAGS) -r:System.Core.dll -r:$(CS_OUT)/Pathd.dll -out:$@ $(filter %.cs,$^)
$(CS_OUT)/example.exe: clients/csharp/Example.cs $(CS_OUT)/Pathd.dll
	mcs $(CS_FLAGS) -r:$(CS_OUT)/Pathd.dll -out:$@ $<

clients-csharp-test: $(PATHD) $(CS_OUT)/tests.exe $(CS_OUT)/example.exe fleet-deps
	MONO_PATH=$(abspath $(CS_OUT)) PATHD_BIN=$(abspath $(PATHD)) mono $(CS_OUT)/tests.exe $(CS_OUT)/example.exe

clients-test: clients-c-test clients-node-test clients-csharp-test

# The README's quick start, line by line, against a fresh server; the
# Dockerfile's HEALTHCHECK command against a real pathd, its STOPSIGNAL and
# stop timeout (Docker itself cannot run here); the README's flags, their
# stated defaults and its suite list (perl, in every Debian).
first-contact-test: $(PATHD) curl-deps
	tests/quickstart.sh $(PATHD)
	tests/dockerfile.sh $(PATHD)
	perl tests/readme-check.pl $(PATHD)

# The viewer (GET /) in a real browser: tests/browser/viewer.test.js drives
# Debian's chromium with playwright-core (npm, pinned by its package-lock;
# it never downloads a browser of its own) against a fresh pathd.
# Screenshots and the frame times it measures go to build/browser/.
# tests/browser/navmesh.test.js reads nav_test.obj from PATHD_MESH_DIR (CI
# always has it: missing there, the test fails).
BROWSER_STAMP := tests/browser/node_modules/.installed
$(BROWSER_STAMP): tests/browser/package.json tests/browser/package-lock.json | node-deps
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
	@touch $@

viewer-test: $(PATHD) $(BROWSER_STAMP) chromium-deps
	@mkdir -p build/browser
	PATHD_BIN=$(abspath $(PATHD)) CHROMIUM=/usr/bin/chromium BROWSER_ARTIFACTS=$(abspath build/browser) \
	  node --test tests/browser/

# The viewer's frame times on a 1024x1024 map: the viewer test prints them
# and saves them to build/browser/frame-times.json; no test holds them to
# a budget (a shared machine's wall clock is not an assertion).
bench-viewer-grid: viewer-test
	@node -e 'const f = require("./build/browser/frame-times.json"); \
	  console.log(`bench-viewer-grid: 1024x1024 map, two panes: median $${f.median.toFixed(1)} ms, p95 $${f.p95.toFixed(1)} ms, max $${f.max.toFixed(1)} ms a frame`)'

run: $(PATHD)
	./scripts/run-demo.sh $(PATHD)

bench: $(BENCH) bench-json
	@if [ ! -d "$(PATHD_BENCH_DIR)" ]; then \
	  echo "bench: skipped: PATHD_BENCH_DIR=$(PATHD_BENCH_DIR) does not exist"; exit 0; fi; \
	for a in astar dijkstra jps hpa; do \
	  $(BENCH) scen --algorithm $$a $(PATHD_BENCH_DIR)/*.scen; rc=$$?; \
	  if [ $$rc = 3 ]; then echo "bench: $$a skipped: not available in this build"; \
	  elif [ $$rc != 0 ]; then exit $$rc; fi; done
	@$(MAKE) --no-print-directory bench-viewer-grid bench-viewer

# The 3D viewer's frame time on a 100,352-triangle level in headless
# chromium (tests/browser/bench-viewer.js; BENCH_TERRAIN=N sets the level's
# N x N quads, BENCH_FRAMES the orbit's frames). A figure, never asserted.
bench-viewer: $(PATHD) $(BROWSER_STAMP) chromium-deps
	@mkdir -p build/browser
	PATHD_BIN=$(abspath $(PATHD)) CHROMIUM=/usr/bin/chromium BROWSER_ARTIFACTS=$(abspath build/browser) \
	  node tests/browser/bench-viewer.js

bench-http: $(PATHD) $(BENCH)
	./scripts/bench-http.sh $(PATHD) $(BENCH)

# Navmesh queries against Detour direct on RecastDemo's level (read in place)
# and the generated 3D levels (loadtest/README.md).
bench-navmesh: $(BENCH)
	$(BENCH) navmesh --clock cpu $(PATHD_MESH_DIR)/nav_test.obj gen:multifloor gen:terrain

# What one bearer-token check costs (scripts/bench-auth.c).
bench-auth: $(OUT)/bench-auth
	$(OUT)/bench-auth

$(OUT)/bench-auth: scripts/bench-auth.c server/auth.c server/auth.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) scripts/bench-auth.c server/auth.c -o $@ $(LIBS) $(LDFLAGS_SAN)

# What a path answer costs to write, jsonw against a cJSON tree
# (scripts/bench-json.c; the figure the proto tests used to time).
bench-json: $(OUT)/bench-json
	$(OUT)/bench-json

$(OUT)/bench-json: scripts/bench-json.c $(PROTO_OBJ) $(OUT)/libpathd_nav.a $(OUT)/libpathd_core.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $^ -o $@ $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

# Waypoint graph figures (issue 28): a 5,000-node game graph, a 1024x1024
# grid converted, Berlin_1_1024 against its scenarios (scripts/bench-graph.c).
bench-graph: $(OUT)/bench-graph
	$(OUT)/bench-graph $(PATHD_BENCH_DIR)

$(OUT)/bench-graph: scripts/bench-graph.c scripts/bench_graph_common.h $(PROTO_OBJ) $(OUT)/libpathd_nav.a $(OUT)/libpathd_core.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(filter-out %.h,$^) -o $@ $(LIBS) $(NAV_LIBS) $(LDFLAGS_SAN)

# Graph sessions' repair against a fresh A* (issues 28, 29): chases on the
# 5,000-node game graph and a 1024x1024 grid converted
# (scripts/bench-graph-sessions.c).
.PHONY: bench-graph-sessions
bench-graph-sessions: $(OUT)/bench-graph-sessions
	$(OUT)/bench-graph-sessions

$(OUT)/bench-graph-sessions: scripts/bench-graph-sessions.c scripts/bench_graph_common.h $(OUT)/libpathd_core.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS) $(filter-out %.h,$^) -o $@ $(LIBS) $(LDFLAGS_SAN)

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
# proto/nav_info.c reads navmesh versions (the C++ shim): not in the fuzz
# build, which links no C++; the OBJ reader and the navmesh defaults are C.
FUZZ_SRC := tests/fuzz_inputs.c $(CORE_SRC) $(filter-out proto/nav_info.c proto/mesh_json.c,$(PROTO_SRC)) \
            nav/obj.c nav/navconf.c server/ws.c server/store.c server/router.c server/image.c \
            server/kind_grid_image.c server/kind_navmesh_image.c \
            server/auth.c server/http_strict.c server/guard.c server/config.c
# -O1 for fuzzing (build/fuzz); the replay builds the same harness at -O0
# into build/fuzz-replay (it runs each seed once: compile time is what
# counts there, about 4x less).
FUZZ_OPT ?= -O1
FUZZ_DIR ?= build/fuzz
FUZZ_BIN := $(FUZZ_DIR)/fuzz_inputs
FUZZ_CFLAGS := -std=c11 -g $(FUZZ_OPT) -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=all
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_SRC))
# One object a source (make -j builds them side by side), then the link.
$(FUZZ_DIR)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(dir $@)
	clang $(CPPFLAGS) $(PKG_CFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BIN): $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) $^ -o $@ $(LIBS)

# The harness fed every seed of tests/fuzz_seeds once, without fuzzing (a
# few seconds): make test runs it, so a change that breaks a reader of
# client input (a crash, a sanitizer report, a leak) fails CI.
fuzz-replay:
	@$(MAKE) --no-print-directory FUZZ_OPT=-O0 FUZZ_DIR=build/fuzz-replay fuzz-replay-run

fuzz-replay-run: $(FUZZ_BIN)
	$(FUZZ_BIN) -runs=0 -timeout=10 -rss_limit_mb=2048 tests/fuzz_seeds

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
	  $(call apt_install,clang libclang-rt-14-dev); \
	fi

# The npm `ws` package, an independent WebSocket client for the stream and
# guard suites (tests/js, pinned by package-lock.json), installed with npm
# ci whenever the lock file changes. A failed install stops make (and in CI
# those tests fail without it).
JS_STAMP := tests/js/node_modules/.installed
js-deps: $(JS_STAMP)
$(JS_STAMP): tests/js/package.json tests/js/package-lock.json | node-deps
	npm ci --prefix tests/js --no-audit --no-fund --loglevel=error
	@touch $@

# What the TLS tests run: openssl makes a certificate, curl speaks HTTPS
# to the server (Debian packages openssl and curl).
test-tools:
	@missing=""; for t in openssl curl; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then $(call apt_install,$$missing); fi

# The spec's tools (tests/spec, pinned by package-lock.json): @redocly/cli
# lints proto/openapi.yaml, ajv validates the suites' answers against it.
# Installed with npm ci whenever the lock file changes; not optional, so a
# machine without node and npm gets Debian's (bookworm: Node 18.20, npm
# 9.2). @redocly/cli is pinned to 1.34.x, which runs on Node >= 18.17 (2.x
# needs 20.19); every npm tree here runs on Debian's Node 18.
SPEC_STAMP := tests/spec/node_modules/.installed
spec-deps: $(SPEC_STAMP)
$(SPEC_STAMP): tests/spec/package.json tests/spec/package-lock.json | node-deps
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
	  { $(SUDO) apt-get -o DPkg::Lock::Timeout=600 update -qq && apt-get download prometheus; }; }
	mkdir -p build/tools/prometheus && dpkg-deb --fsys-tarfile build/tools/deb/prometheus_*.deb | \
	  tar -x -C build/tools/prometheus ./usr/bin/promtool
	@rm -rf build/tools/deb
	@test -x $@ && touch $@

# node and npm for the spec tools and clients/node (Debian's when missing).
node-deps:
	@if ! command -v npm >/dev/null 2>&1; then $(call apt_install,nodejs npm); fi

# Debian's chromium for the viewer test.
chromium-deps:
	@if [ ! -x /usr/bin/chromium ]; then $(call apt_install,chromium); fi

# curl for the README quick start check.
curl-deps:
	@if ! command -v curl >/dev/null 2>&1; then $(call apt_install,curl); fi

# g++ compiles clients/c/pathd.c as C++ once.
cxx-deps:
	@if ! command -v g++ >/dev/null 2>&1; then $(call apt_install,g++); fi

# mono for clients/csharp: the compiler, the runtime and System.Net.Http.
MONO_DEBS := mono-mcs mono-runtime libmono-system-net-http4.0-cil
mono-deps:
	@if ! command -v mcs >/dev/null 2>&1 || ! command -v mono >/dev/null 2>&1 || \
	    [ ! -e /usr/lib/mono/4.5/System.Net.Http.dll ]; then \
	  $(call apt_install,$(MONO_DEBS)); \
	fi

# The real components the fleet suite (tests/test_fleet.c) starts on
# loopback ports: redis-server and nginx; haproxy checks deploy/haproxy.cfg
# (Debian packages redis-server, nginx, haproxy). A failed install stops
# make.
fleet-deps:
	@missing=""; for t in redis-server nginx haproxy; do \
	  command -v $$t >/dev/null 2>&1 || [ -x /usr/sbin/$$t ] || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then $(call apt_install,$$missing); fi

# The load tools the wrk benchmarks drive (Debian packages wrk and curl).
tool-deps:
	@missing=""; for t in wrk curl; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then $(call apt_install,$$missing); fi

deps:
	@missing=""; \
	for p in $(PKGS); do command -v pkg-config >/dev/null 2>&1 && pkg-config --exists $$p || missing=1; done; \
	[ -f $(RECAST_INC)/DetourTileCache.h ] && command -v $(CXX) >/dev/null 2>&1 || missing=1; \
	if [ -n "$$missing" ]; then $(call apt_install,$(DEBS)); fi

# Every C source of the tree against .clang-format (Debian clang-format 14,
# installed when missing). .ci/run runs it.
FORMAT_SRC = $(wildcard core/*.[ch] nav/*.[ch] nav/*.cpp proto/*.[ch] server/*.[ch] loadtest/*.[ch] loadtest/*.cpp tests/*.[ch] tests/*.cpp clients/c/*.[ch])
format-check:
	@if ! command -v clang-format >/dev/null 2>&1; then $(call apt_install,clang-format); fi
	clang-format --dry-run -Werror $(FORMAT_SRC)

format:
	clang-format -i $(FORMAT_SRC)

# cppcheck (Debian package, installed when missing) over every C source,
# clients/c included:
# errors, warnings, performance and portability findings fail it. Not the
# style class: it would move declarations from the top of their block, which
# the house style keeps there. One suppression: core/jps*'s branch-free
# tests shift negative int32 values right by 31 to make all-ones masks,
# relying on the arithmetic shift gcc and clang define. The C++ files (nav/
# over Detour, the bench's Detour baseline, the tests' Detour reference) are
# read as C++11 with one more: memset on a struct of floats is zero on the
# IEEE 754 machines pathd builds for.
CPPCHECK_FLAGS := --quiet --std=c11 --enable=warning,performance,portability --inline-suppr \
                  --error-exitcode=1 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
                  -Icore -Inav -Iproto -Iserver -Iloadtest -Itests \
                  --suppress='shiftTooManyBitsSigned:core/jps*.c'
cppcheck:
	@if ! command -v cppcheck >/dev/null 2>&1; then $(call apt_install,cppcheck); fi
	cppcheck $(CPPCHECK_FLAGS) -Iclients/c core nav/obj.c nav/navconf.c proto server loadtest tests clients/c
	cppcheck $(filter-out --std=c11,$(CPPCHECK_FLAGS)) --std=c++11 --language=c++ \
	  --suppress=memsetClassFloat $(wildcard nav/*.cpp loadtest/*.cpp tests/*.cpp)

clean:
	rm -rf build
