# Thin wrapper over CMake. `make` builds build/libonyx.a, build/libonyx.so, build/onyx.
BUILD ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all build test check asan tsan fuzz install clean wasm

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DONYX_SANITIZE=ON -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build build-asan -j $(JOBS)

# ThreadSanitizer build of the concurrency tests (test_concurrency, test_cancel) into build-tsan/.
tsan:
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DONYX_TSAN=ON -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target test_concurrency test_cancel

fuzz:
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DONYX_FUZZ=ON -DONYX_BUILD_TESTS=OFF -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_load_run

# WebAssembly module for js/ (Debian's emscripten) into build-wasm/, copied to js/dist/.
# NODE_PATH: Emscripten's JS optimiser needs acorn, which Debian installs under /usr/share/nodejs.
wasm:
	@NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
	@NODE_PATH=/usr/share/nodejs cmake --build build-wasm -j $(JOBS)
	@mkdir -p js/dist && cp build-wasm/onyx-wasm.js js/dist/onyx-wasm.cjs && cp build-wasm/onyx-wasm.wasm js/dist/

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-wasm js/dist
