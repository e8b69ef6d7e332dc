/* A tiny test harness: CHECK records a failure and goes on; each test file's
 * main returns testlib_finish(). */
#ifndef ONYX_TESTLIB_H
#define ONYX_TESTLIB_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "onyx.h"

/* TESTLIB_SANITIZED: 1 in the AddressSanitizer and ThreadSanitizer builds
 * (Debug, 10-100x slower), where the heaviest tests run shorter sets. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TESTLIB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TESTLIB_SANITIZED 1
#endif
#endif
#ifndef TESTLIB_SANITIZED
#define TESTLIB_SANITIZED 0
#endif

extern int testlib_failures;
extern int testlib_checks;

#define CHECK(cond)                                                              \
    do {                                                                         \
        testlib_checks++;                                                        \
        if (!(cond)) {                                                           \
            testlib_failures++;                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

/* Check that a status is OK (NULL); prints and frees it otherwise. */
#define CHECK_OK(expr) testlib_check_ok((expr), __FILE__, __LINE__, #expr)
/* Check that a status is an error whose message contains `needle`; frees it. */
#define CHECK_ERR(expr, needle) testlib_check_err((expr), (needle), __FILE__, __LINE__, #expr)

void testlib_check_ok(onyx_status *st, const char *file, int line, const char *expr);
void testlib_check_err(onyx_status *st, const char *needle, const char *file, int line,
                       const char *expr);
int testlib_finish(const char *name);

/* A fresh scratch directory /tmp/onyx_NAME_XXXXXX for a test's files (false
 * when it cannot be made), paths inside it (four rotating buffers, so a
 * call may take two or three of them at once), and its removal with
 * everything in it. */
bool testlib_tmpdir_create(const char *name);
const char *testlib_tmp(const char *file);
void testlib_tmpdir_remove(void);

/* Deterministic pseudo-random numbers (xorshift64) for test inputs: each
 * test program draws the same sequence on every run, from a fixed seed or
 * the one given to testlib_seed (nonzero; 0 picks the fixed one). */
void testlib_seed(uint64_t seed);
uint64_t testlib_rand_u64(void);   /* the next 64 random bits */
float testlib_frand(void);         /* uniform in [-1, 1) */

/* Input i of a session, made from its metadata: symbolic dims batch 2, seq
 * 7, enc_seq 5, others 3; floats from sin, int64 ids below 50 (an input
 * named types: below 2), masks of ones with padding at the end of the
 * first row. NULL (a failed check) when it cannot be made. */
onyx_value *testlib_session_input(const onyx_session *s, size_t i);

/* A session on path with `threads` intra-op threads (NULL, after a failed
 * check, when it cannot be made). */
onyx_session *testlib_open_session(onyx_env *env, const char *path, int threads);

/* Run s on testlib_session_input's inputs; outs[] (at least
 * TESTLIB_MAX_IO entries) receives every output. */
#define TESTLIB_MAX_IO 16
void testlib_run_all(onyx_session *s, onyx_value **outs);
#endif
