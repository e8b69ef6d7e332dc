# Thin wrapper over CMake. `make` builds build/libonyx.a, build/libonyx.so, build/onyx.
BUILD ?= build
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all build test check asan tsan fuzz install clean aarch64 wasm

all: build

build:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# ASan/UBSan build into build-asan/: the unit tests and the libFuzzer target (scripts/fuzz.sh
# with FUZZ_BUILD=build-asan uses it; one build instead of two).
asan:
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DONYX_SANITIZE=ON -DONYX_FUZZ=ON -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build build-asan -j $(JOBS)

# ThreadSanitizer build of the concurrency tests (test_concurrency, test_cancel, test_threadpool) into build-tsan/.
tsan:
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DONYX_TSAN=ON -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target test_concurrency test_cancel test_threadpool

fuzz:
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DONYX_FUZZ=ON -DONYX_BUILD_TESTS=OFF -DCMAKE_C_COMPILER=clang >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_load_run

# ARM64 cross build with Debian's gcc-aarch64-linux-gnu into build-aarch64/ (cmake/aarch64-linux-gnu.cmake;
# `ctest` there runs the tests through qemu-aarch64). On an ARM64 host plain `make` builds natively.
# PCRE2 and the codecs come from the arm64 multiarch packages (scripts/deps.sh aarch64); pass
# AARCH64_DEPS="-DONYX_WITH_PCRE2=OFF -DONYX_WITH_IMAGE_CODECS=OFF" to build without them.
AARCH64_DEPS ?= -DONYX_WITH_PCRE2=ON -DONYX_WITH_IMAGE_CODECS=ON
aarch64:
	@cmake -S . -B build-aarch64 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake $(AARCH64_DEPS) >/dev/null
	@cmake --build build-aarch64 -j $(JOBS)

# WebAssembly module for js/ (Debian's emscripten) into build-wasm/, copied to js/dist/.
# NODE_PATH: Emscripten's JS optimiser needs acorn, which Debian installs under /usr/share/nodejs.
wasm:
	@NODE_PATH=/usr/share/nodejs emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release >/dev/null
	@NODE_PATH=/usr/share/nodejs cmake --build build-wasm -j $(JOBS)
	@mkdir -p js/dist && cp build-wasm/onyx-wasm.js js/dist/onyx-wasm.cjs && cp build-wasm/onyx-wasm.wasm js/dist/

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-aarch64 build-wasm js/dist
