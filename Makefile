# The two commands of the README: `make run` and `make test`. Everything else is a helper.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
SCENARIO ?= configs/scenarios/default.yaml

.PHONY: run test deps configure build bench bench-compare sanitize sanitize-configure sanitize-sim fuzz clean

deps:
	@scripts/install_deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release > /dev/null

# Everything: the binary, every test and fuzz replay, the benchmarks.
build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# `make run` builds the binary alone (the tests are what takes the rest of a full build).
run: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target nvsvp
	$(BUILD_DIR)/nvsvp run $(SCENARIO)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# ASan + UBSan (halting on the first report, leaks checked) over the whole project and suite, in its
# own folder (docs/reliability.md). The suppressions name only what is proven to be SystemC's.
SANITIZE_DIR ?= build-sanitize
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitize/lsan.supp:print_suppressions=0
SANITIZE_TESTS ?= .
# The sanitized tree compiles in batches (a unity build: one compiler run per eight sources of a
# target, about 2.7x less compile time) with line tables only (-g1: a report's stack still has
# files and lines); docs/decisions.md, "Sanitizers and CI".
sanitize-configure: deps
	@cmake -S . -B $(SANITIZE_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
	  -DNVSVP_SANITIZE=ON -DCMAKE_UNITY_BUILD=ON > /dev/null
sanitize: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -R '$(SANITIZE_TESTS)' \
	  -E 'out_of_memory'

# What CI runs sanitized: the simulating and command-line tests (and the trace check that closes
# them), with only their three targets built. The unit, reduction and fuzz-replay tests run in
# the release build of `make test`; `make sanitize` runs them sanitized too. The fast fabric's
# agreement on the calibration cases runs the code the other fast fabric tests run, for eight
# minutes sanitized: `make sanitize` keeps it, CI does not.
SANITIZE_SIM_TARGETS = nvsvp nvsvp_sim_tests nvsvp_trace_nesting_check
sanitize-sim: sanitize-configure
	@cmake --build $(SANITIZE_DIR) -j $(JOBS) --target $(SANITIZE_SIM_TARGETS)
	cd $(SANITIZE_DIR) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -R '^(sim|cli|traces)\.' \
	  -E 'out_of_memory|fast_fabric_agrees_on_the_calibration_cases'

bench: build
	scripts/bench.sh

# The benchmarks beside a reference binary, alternated, medians of 3: make bench-compare REF=path/to/nvsvp
# (BENCH_ARGS: more options of scripts/bench_compare.sh, e.g. --set-this simulation.fabric=fast).
bench-compare: build
	@test -n "$(REF)" || { echo "make bench-compare REF=path/to/reference/nvsvp" >&2; exit 2; }
	scripts/bench_compare.sh $(REF) $(BENCH_ARGS)

# The libFuzzer harnesses of the input readers, FUZZ_SECONDS each (clang build in build-fuzz/).
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) scripts/fuzz.sh

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) build-fuzz out
