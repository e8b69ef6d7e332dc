/* memcpy for the WebAssembly module, in SIMD128.
 *
 * Emscripten 3.1.6's libc memcpy (emscripten_memcpy.c, a weak definition,
 * so this one replaces it at link time) copies 4 bytes at a time, and hands
 * every copy of 512 bytes or more to JavaScript (HEAPU8.copyWithin): a
 * crossing out of WebAssembly and back per call. The kernels make many
 * such copies of a few KB (convolution rows, Concat slices, pooling planes):
 * in SqueezeNet 1.1 the crossings alone took about 5% of a run (V8's
 * profiler). Newer toolchains use the bulk-memory memory.copy instead, but
 * LLVM 14's wasm-ld refuses bulk memory in a module with thread-local
 * variables and no atomics (this single-threaded build has both), so
 * this file copies with 16-byte vectors, the last vector overlapping the
 * previous one rather than a byte loop for the tail. */
#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

typedef uint64_t u64_unaligned __attribute__((aligned(1), may_alias));
typedef uint32_t u32_unaligned __attribute__((aligned(1), may_alias));

/* no_builtin: the loops below must stay loops, not become calls to memcpy */
__attribute__((no_builtin("memcpy"))) void *memcpy(void *restrict dest, const void *restrict src, size_t n) {
    unsigned char *d = dest;
    const unsigned char *s = src;
    if (n >= 16) {
        const v128_t last = wasm_v128_load(s + n - 16);
        unsigned char *d_last = d + n - 16;
        for (; n >= 64; n -= 64, d += 64, s += 64) {
            v128_t a = wasm_v128_load(s), b = wasm_v128_load(s + 16);
            v128_t c = wasm_v128_load(s + 32), e = wasm_v128_load(s + 48);
            wasm_v128_store(d, a);
            wasm_v128_store(d + 16, b);
            wasm_v128_store(d + 32, c);
            wasm_v128_store(d + 48, e);
        }
        for (; n >= 16; n -= 16, d += 16, s += 16) wasm_v128_store(d, wasm_v128_load(s));
        wasm_v128_store(d_last, last);
        return dest;
    }
    if (n >= 8) {   /* two 8-byte moves, overlapping when n < 16 */
        uint64_t a = *(const u64_unaligned *)s, b = *(const u64_unaligned *)(s + n - 8);
        *(u64_unaligned *)d = a;
        *(u64_unaligned *)(d + n - 8) = b;
        return dest;
    }
    if (n >= 4) {
        uint32_t a = *(const u32_unaligned *)s, b = *(const u32_unaligned *)(s + n - 4);
        *(u32_unaligned *)d = a;
        *(u32_unaligned *)(d + n - 4) = b;
        return dest;
    }
    for (size_t i = 0; i < n; i++) d[i] = s[i];
    return dest;
}
