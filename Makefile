# The two commands of the README: `make run` and `make test`. Everything else is a helper.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
SCENARIO ?= configs/scenarios/default.yaml

.PHONY: run test deps build bench fuzz clean

deps:
	@scripts/install_deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/nvsvp run $(SCENARIO)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	scripts/bench.sh

# The libFuzzer harnesses of the input readers, FUZZ_SECONDS each (clang build in build-fuzz/).
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(JOBS) scripts/fuzz.sh

clean:
	rm -rf $(BUILD_DIR) out
