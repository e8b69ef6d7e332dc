/* The library built without PCRE2 and without the image codecs
 * (ONYX_WITH_PCRE2=OFF, ONYX_WITH_IMAGE_CODECS=OFF): the three sources that
 * use them are compiled again without ONYX_HAVE_* and linked with the rest
 * of the library's objects and none of those libraries (tests/CMakeLists.txt),
 * so the link itself proves nothing refers to them. Uses the ONNX node tests
 * in ../shared/onnx-tests/node:
 *   - RegexFullMatch is refused at session creation, naming ONYX_WITH_PCRE2;
 *   - ImageDecoder refuses PNG, JPEG, TIFF, WebP and JPEG 2000 streams at run
 *     time naming each option, and still decodes BMP and PNM exactly;
 *   - the other string operators still run (StringNormalizer). */
#include <string.h>
#include "core/value.h"
#include "testlib.h"
#include "tools/tensor_io.h"

#define NODE_DIR "../shared/onnx-tests/node/"

static onyx_env *env;

/* Run test NAME's model on input_0.pb. Returns the run's status; on success
 * *out holds output 0 and *expected output_0.pb. */
static onyx_status *run_node_test(const char *name, onyx_value **out, onyx_value **expected) {
    char path[512];
    onyx_session *s = NULL;
    onyx_value *x = NULL;
    *out = *expected = NULL;
    snprintf(path, sizeof path, NODE_DIR "%s/model.onnx", name);
    onyx_status *st = onyx_session_create(env, path, NULL, &s);
    if (!st) {
        snprintf(path, sizeof path, NODE_DIR "%s/test_data_set_0/input_0.pb", name);
        st = tio_read_pb(path, ONYX_VALUE_UNKNOWN, &x);
    }
    if (!st) {
        const char *in_name = onyx_session_input_name(s, 0), *out_name = onyx_session_output_name(s, 0);
        const onyx_value *inputs[] = {x};
        st = onyx_session_run(s, NULL, &in_name, inputs, 1, &out_name, 1, out);
    }
    if (!st) {
        snprintf(path, sizeof path, NODE_DIR "%s/test_data_set_0/output_0.pb", name);
        st = tio_read_pb(path, ONYX_VALUE_UNKNOWN, expected);
    }
    onyx_value_free(x);
    onyx_session_free(s);
    return st;
}

static void check_refused(const char *name, const char *option) {
    onyx_value *y, *want;
    CHECK_ERR(run_node_test(name, &y, &want), option);
    onyx_value_free(y);
    onyx_value_free(want);
}

static void check_decodes(const char *name) {
    onyx_value *y, *want;
    CHECK_OK(run_node_test(name, &y, &want));
    CHECK(y && want && y->dtype == want->dtype && y->nbytes == want->nbytes && y->rank == want->rank);
    if (y && want && y->nbytes == want->nbytes)
        CHECK(memcmp(y->data, want->data, y->nbytes) == 0);
    onyx_value_free(y);
    onyx_value_free(want);
}

int main(void) {
    CHECK_OK(onyx_env_create(ONYX_LOG_ERROR, "without_deps", &env));

    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create(env, NODE_DIR "test_regex_full_match_basic/model.onnx", NULL, &s);
    CHECK(st != NULL);
    if (st) {
        const char *msg = onyx_status_message(st);
        CHECK(strstr(msg, "RegexFullMatch") != NULL);
        CHECK(strstr(msg, "-DONYX_WITH_PCRE2=ON") != NULL);
        onyx_status_free(st);
    }
    onyx_session_free(s);

    check_refused("test_image_decoder_decode_png_rgb", "-DONYX_WITH_PNG=ON");
    check_refused("test_image_decoder_decode_jpeg_rgb", "-DONYX_WITH_JPEG=ON");
    check_refused("test_image_decoder_decode_tiff_rgb", "-DONYX_WITH_TIFF=ON");
    check_refused("test_image_decoder_decode_webp_rgb", "-DONYX_WITH_WEBP=ON");
    check_refused("test_image_decoder_decode_jpeg2k_rgb", "-DONYX_WITH_OPENJPEG=ON");
    check_decodes("test_image_decoder_decode_bmp_rgb");
    check_decodes("test_image_decoder_decode_pnm_rgb");

    /* the rest of the string family stays */
    onyx_value *y, *want;
    CHECK_OK(run_node_test("test_strnormalizer_export_monday_casesensintive_upper", &y, &want));
    CHECK(y && want && y->dtype == ONYX_STRING && y->numel == want->numel);
    if (y && want && y->dtype == ONYX_STRING && want->dtype == ONYX_STRING && y->numel == want->numel) {
        const onyx_string *a = y->data, *b = want->data;
        for (int64_t i = 0; i < y->numel; i++)
            CHECK(a[i].len == b[i].len && (!a[i].len || !memcmp(a[i].data, b[i].data, a[i].len)));
    }
    onyx_value_free(y);
    onyx_value_free(want);

    onyx_env_free(env);
    return testlib_finish("test_without_deps");
}
