/* ImageDecoder (opset 20): decodes a BMP, PNM (PBM/PGM/PPM), PNG, JPEG,
 * JPEG 2000 (JP2 or raw codestream), TIFF or WebP byte stream into a uint8
 * [H, W, C] image, C = 3 for pixel_format RGB/BGR and 1 for Grayscale.
 *
 * The format is told by its magic bytes. PNG, JPEG, TIFF, WebP and JPEG 2000
 * go through their Debian libraries (libpng, libjpeg-turbo, libtiff, libwebp,
 * openjpeg); BMP and PNM are small decoders here. Every decoder produces a
 * gray (1 channel) or RGB (3 channel) image; alpha is dropped. The output
 * then follows the ONNX reference (Pillow): gray becomes RGB by copying,
 * RGB becomes gray with Pillow's weights (R*19595 + G*38470 + B*7471 +
 * 2^15) >> 16, JPEG uses libjpeg's default ("fancy") chroma upsampling.
 *
 * Each library is a build option (cmake/optional_deps.cmake): a build
 * without one refuses streams of its format with an error naming the option
 * (a decoder missing from the build is not a bad stream), while BMP and PNM
 * always work.
 *
 * The bytes are untrusted. Library errors are caught (libpng and libjpeg
 * through setjmp, libtiff and openjpeg through per-decoder handlers, which
 * also keep them quiet), every read of the stream is bounds-checked, and
 * images over 2^28 pixels are refused before any pixel buffer is made.
 * As the spec says, a stream that cannot be decoded gives an empty image
 * ([0, 0, C]) rather than an error; only running out of memory fails. */
#include <limits.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ONYX_HAVE_JPEG
#include <jpeglib.h>
#endif
#ifdef ONYX_HAVE_OPENJPEG
#include <openjpeg.h>
#endif
#ifdef ONYX_HAVE_PNG
#include <png.h>
#endif
#ifdef ONYX_HAVE_TIFF
#include <tiffio.h>
#endif
#ifdef ONYX_HAVE_WEBP
#include <webp/decode.h>
#endif
#include "providers/cpu/kernel.h"
#include "ir/schemas/image.h"

/* Largest image decoded (a build may lower it, e.g. for fuzzing). */
#ifndef ONYX_IMAGE_MAX_PIXELS
#define ONYX_IMAGE_MAX_PIXELS (INT64_C(1) << 28)
#endif
#define MAX_PIXELS ONYX_IMAGE_MAX_PIXELS

/* DEC_NO_*: the stream's format needs a library this build left out. */
typedef enum {
    DEC_OK, DEC_BAD, DEC_OOM, DEC_NO_PNG, DEC_NO_JPEG, DEC_NO_TIFF, DEC_NO_WEBP, DEC_NO_OPENJPEG
} dec_result;

/* A decoded image: channels is 1 (gray) or 3 (RGB), rows packed. */
typedef struct image {
    int64_t w, h;
    int channels;
    uint8_t *px;
} image;

/* Allocate img->px for w x h x channels after checking the size limit. */
static dec_result image_alloc(image *img, int64_t w, int64_t h, int channels) {
    if (w <= 0 || h <= 0 || w > MAX_PIXELS || h > MAX_PIXELS || w * h > MAX_PIXELS) return DEC_BAD;
    img->w = w, img->h = h, img->channels = channels;
    img->px = malloc((size_t)(w * h * channels));
    return img->px ? DEC_OK : DEC_OOM;
}

#if defined(ONYX_HAVE_PNG) || defined(ONYX_HAVE_JPEG)  /* their row callbacks */
/* Store one row of w pixels with src_ch channels (1 gray, 2 gray+alpha,
 * 3 RGB, 4 RGBA) into the image's row y, dropping alpha. */
static void store_row(image *img, int64_t y, const uint8_t *src, int src_ch) {
    uint8_t *dst = img->px + (size_t)(y * img->w * img->channels);
    for (int64_t x = 0; x < img->w; x++, src += src_ch) {
        if (img->channels == 1) {
            *dst++ = src[0];
        } else {
            *dst++ = src[0];
            *dst++ = src[1];
            *dst++ = src[2];
        }
    }
}
#endif

static inline uint8_t pil_luma(uint8_t r, uint8_t g, uint8_t b) {
    return (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

/* --------------------------------------------------------- byte reading */

typedef struct memfile {
    const uint8_t *data;
    size_t size, pos;
} memfile;

static inline uint32_t rd_le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t rd_le32(const uint8_t *p) { return rd_le16(p) | rd_le16(p + 2) << 16; }

/* ------------------------------------------------------------------- PNG */
#ifdef ONYX_HAVE_PNG

static void png_quiet_error(png_structp png, png_const_charp msg) {
    (void)msg;
    png_longjmp(png, 1);
}
static void png_quiet_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

static void png_read_mem(png_structp png, png_bytep out, size_t n) {
    memfile *mf = png_get_io_ptr(png);
    if (n > mf->size - mf->pos) png_error(png, "truncated");
    memcpy(out, mf->data + mf->pos, n);
    mf->pos += n;
}

static dec_result decode_png(const uint8_t *data, size_t n, image *img) {
    memfile mf = {data, n, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, png_quiet_error,
                                             png_quiet_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return DEC_OOM;
    }
    uint8_t *volatile row = NULL;
    png_bytep *volatile rows = NULL;
    volatile dec_result res = DEC_BAD;
    if (setjmp(png_jmpbuf(png))) goto done;
    png_set_read_fn(png, &mf, png_read_mem);
    png_read_info(png, info);
    int64_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    /* deflate expands at most 1032:1, so a stream this short cannot hold the
     * rows it declares: refuse before allocating for them */
    if ((uint64_t)h * (png_get_rowbytes(png, info) + 1) > (uint64_t)n * 1040 + 65536) goto done;
    /* to 8-bit gray, gray+alpha, RGB or RGBA: 16-bit keeps its high byte
     * (as Pillow), palettes and low bit depths expand */
    png_set_strip_16(png);
    png_set_palette_to_rgb(png);
    png_set_expand_gray_1_2_4_to_8(png);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int ch = png_get_channels(png, info);
    if (ch < 1 || ch > 4 || png_get_rowbytes(png, info) != (size_t)(w * ch)) goto done;
    if ((res = image_alloc(img, w, h, ch >= 3 ? 3 : 1)) != DEC_OK) goto done;
    res = DEC_BAD;
    if (passes == 1) {
        row = malloc((size_t)(w * ch));
        if (!row) {
            res = DEC_OOM;
            goto done;
        }
        for (int64_t y = 0; y < h; y++) {
            png_read_row(png, row, NULL);
            store_row(img, y, row, ch);
        }
    } else {
        /* interlaced: the passes need the whole image */
        size_t rb = (size_t)(w * ch);
        row = malloc(rb * (size_t)h);
        rows = row ? malloc(sizeof *rows * (size_t)h) : NULL;
        if (!rows) {
            res = DEC_OOM;
            goto done;
        }
        for (int64_t y = 0; y < h; y++) rows[y] = row + rb * (size_t)y;
        png_read_image(png, rows);
        for (int64_t y = 0; y < h; y++) store_row(img, y, row + rb * (size_t)y, ch);
    }
    res = DEC_OK;
done:
    free(rows);
    free(row);
    png_destroy_read_struct(&png, &info, NULL);
    return res;
}
#else
static dec_result decode_png(const uint8_t *data, size_t n, image *img) { return DEC_NO_PNG; }
#endif

/* ------------------------------------------------------------------ JPEG */
#ifdef ONYX_HAVE_JPEG

typedef struct jpeg_guard {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
} jpeg_guard;

static void jpeg_quiet_exit(j_common_ptr c) { longjmp(((jpeg_guard *)c->err)->jb, 1); }
static void jpeg_quiet_message(j_common_ptr c) { (void)c; }

/* Progressive files can hold thousands of tiny scans that each cost a pass
 * over the image: stop a stream that is clearly built to burn time. */
#define JPEG_MAX_SCANS 1000
static void jpeg_limit_scans(j_common_ptr c) {
    j_decompress_ptr d = (j_decompress_ptr)c;
    if (c->is_decompressor && d->input_scan_number > JPEG_MAX_SCANS) jpeg_quiet_exit(c);
}

/* Pillow's CMYK (stored inverted, Adobe style) to RGB. */
static inline uint8_t cmyk_channel(uint8_t stored_c, uint8_t stored_k) {
    unsigned t = (255u - stored_c) * stored_k + 128u;
    return (uint8_t)(stored_k - (((t >> 8) + t) >> 8));
}

static void store_jpeg_row(image *img, int64_t y, uint8_t *row, int comps) {
    if (comps == 4) {  /* CMYK -> RGB in place */
        for (int64_t x = 0; x < img->w; x++) {
            uint8_t *p = row + x * 4;
            uint8_t k = p[3];
            p[0] = cmyk_channel(p[0], k), p[1] = cmyk_channel(p[1], k), p[2] = cmyk_channel(p[2], k);
        }
    }
    store_row(img, y, row, comps);
}

static dec_result decode_jpeg(const uint8_t *data, size_t n, image *img) {
    struct jpeg_decompress_struct cinfo;
    jpeg_guard err;
    struct jpeg_progress_mgr progress = {.progress_monitor = jpeg_limit_scans};
    uint8_t *volatile row = NULL;
    volatile dec_result res = DEC_BAD;
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = jpeg_quiet_exit;
    err.pub.output_message = jpeg_quiet_message;
    if (setjmp(err.jb)) goto done;
    jpeg_create_decompress(&cinfo);
    /* libjpeg-turbo refuses larger working buffers (progressive coefficients) */
    cinfo.mem->max_memory_to_use = 2L << 30;
    if (n > ULONG_MAX) goto done;
    jpeg_mem_src(&cinfo, data, (unsigned long)n);
    cinfo.progress = &progress;
    if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) goto done;
    int64_t w = cinfo.image_width, h = cinfo.image_height;
    if (w <= 0 || h <= 0 || w * h > MAX_PIXELS) goto done;
    switch (cinfo.jpeg_color_space) {
    case JCS_GRAYSCALE: cinfo.out_color_space = JCS_GRAYSCALE; break;
    case JCS_CMYK: case JCS_YCCK: cinfo.out_color_space = JCS_CMYK; break;
    default: cinfo.out_color_space = JCS_RGB; break;
    }
    jpeg_start_decompress(&cinfo);
    int comps = cinfo.output_components;
    if ((comps != 1 && comps != 3 && comps != 4) || cinfo.output_width != w || cinfo.output_height != h)
        goto done;
    if ((res = image_alloc(img, w, h, comps == 1 ? 1 : 3)) != DEC_OK) goto done;
    res = DEC_OOM;
    if (!(row = malloc((size_t)(w * comps)))) goto done;
    res = DEC_BAD;
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW rows[1] = {row};
        int64_t y = cinfo.output_scanline;
        if (jpeg_read_scanlines(&cinfo, rows, 1) != 1) goto done;
        store_jpeg_row(img, y, row, comps);
    }
    jpeg_finish_decompress(&cinfo);
    res = DEC_OK;
done:
    free(row);
    jpeg_destroy_decompress(&cinfo);
    return res;
}
#else
static dec_result decode_jpeg(const uint8_t *data, size_t n, image *img) { return DEC_NO_JPEG; }
#endif

/* ------------------------------------------------------------------ TIFF */
#ifdef ONYX_HAVE_TIFF

static tmsize_t tiff_read(thandle_t h, void *buf, tmsize_t n) {
    memfile *mf = (memfile *)h;
    if (n < 0) return -1;
    size_t k = (size_t)n < mf->size - mf->pos ? (size_t)n : mf->size - mf->pos;
    memcpy(buf, mf->data + mf->pos, k);
    mf->pos += k;
    return (tmsize_t)k;
}
static tmsize_t tiff_write(thandle_t h, void *buf, tmsize_t n) { (void)h, (void)buf, (void)n; return -1; }
static toff_t tiff_seek(thandle_t h, toff_t off, int whence) {
    memfile *mf = (memfile *)h;
    uint64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? mf->pos : mf->size;
    if (off > UINT64_MAX - base || base + off > mf->size) return (toff_t)-1;
    mf->pos = (size_t)(base + off);
    return mf->pos;
}
static int tiff_close(thandle_t h) { (void)h; return 0; }
static toff_t tiff_size(thandle_t h) { return ((memfile *)h)->size; }
static int tiff_map(thandle_t h, void **base, toff_t *size) { (void)h, (void)base, (void)size; return 0; }
static void tiff_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }
static int tiff_quiet(TIFF *t, void *user, const char *module, const char *fmt, va_list ap) {
    (void)t, (void)user, (void)module, (void)fmt, (void)ap;
    return 1;  /* handled: the process-wide handler stays silent */
}

static dec_result decode_tiff(const uint8_t *data, size_t n, image *img) {
    memfile mf = {data, n, 0};
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) return DEC_OOM;
    TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_quiet, NULL);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_quiet, NULL);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)MAX_PIXELS * 4);
    TIFF *tif = TIFFClientOpenExt("stream", "rm", (thandle_t)&mf, tiff_read, tiff_write, tiff_seek,
                                  tiff_close, tiff_size, tiff_map, tiff_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif) return DEC_BAD;
    dec_result res = DEC_BAD;
    uint32_t w = 0, h = 0, *raster = NULL;
    char msg[1024];
    if (TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) && TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h) &&
        w > 0 && h > 0 && (uint64_t)w * h <= (uint64_t)MAX_PIXELS && TIFFRGBAImageOK(tif, msg)) {
        raster = malloc((size_t)w * h * sizeof *raster);
        res = raster ? DEC_BAD : DEC_OOM;
    }
    /* libtiff's RGBA reader handles every photometric/bit depth/compression */
    if (raster && TIFFReadRGBAImageOriented(tif, w, h, raster, ORIENTATION_TOPLEFT, 1)) {
        /* RGBA words to RGB bytes in place (byte 3i never passes word i), so
         * the raster becomes the image */
        uint8_t *px = (uint8_t *)raster;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            uint32_t p = raster[i];
            px[3 * i] = (uint8_t)TIFFGetR(p), px[3 * i + 1] = (uint8_t)TIFFGetG(p),
            px[3 * i + 2] = (uint8_t)TIFFGetB(p);
        }
        img->w = w, img->h = h, img->channels = 3, img->px = px;
        raster = NULL;
        res = DEC_OK;
    }
    free(raster);
    TIFFClose(tif);
    return res;
}
#else
static dec_result decode_tiff(const uint8_t *data, size_t n, image *img) { return DEC_NO_TIFF; }
#endif

/* ------------------------------------------------------------------ WebP */
#ifdef ONYX_HAVE_WEBP

static dec_result decode_webp(const uint8_t *data, size_t n, image *img) {
    WebPBitstreamFeatures f;
    if (WebPGetFeatures(data, n, &f) != VP8_STATUS_OK || f.has_animation) return DEC_BAD;
    dec_result r = image_alloc(img, f.width, f.height, 3);
    if (r != DEC_OK) return r;
    size_t size = (size_t)(img->w * img->h * 3);
    if (!WebPDecodeRGBInto(data, n, img->px, size, (int)(img->w * 3))) return DEC_BAD;
    return DEC_OK;
}
#else
static dec_result decode_webp(const uint8_t *data, size_t n, image *img) { return DEC_NO_WEBP; }
#endif

/* -------------------------------------------------------------- JPEG 2000 */
#ifdef ONYX_HAVE_OPENJPEG

static OPJ_SIZE_T opj_read_mem(void *buf, OPJ_SIZE_T n, void *user) {
    memfile *mf = user;
    if (mf->pos >= mf->size) return (OPJ_SIZE_T)-1;
    size_t k = n < mf->size - mf->pos ? n : mf->size - mf->pos;
    memcpy(buf, mf->data + mf->pos, k);
    mf->pos += k;
    return k;
}
static OPJ_OFF_T opj_skip_mem(OPJ_OFF_T n, void *user) {
    memfile *mf = user;
    if (n < 0 ? (uint64_t)-n > mf->pos : (uint64_t)n > mf->size - mf->pos) return -1;
    mf->pos = (size_t)((OPJ_OFF_T)mf->pos + n);
    return n;
}
static OPJ_BOOL opj_seek_mem(OPJ_OFF_T pos, void *user) {
    memfile *mf = user;
    if (pos < 0 || (uint64_t)pos > mf->size) return OPJ_FALSE;
    mf->pos = (size_t)pos;
    return OPJ_TRUE;
}
static void opj_quiet(const char *msg, void *user) { (void)msg, (void)user; }

/* Sample (x, y) of component c, shifted to 8 bits as Pillow does. */
static int j2k_sample(const opj_image_comp_t *c, int64_t x, int64_t y) {
    int64_t cx = x / (c->dx ? c->dx : 1), cy = y / (c->dy ? c->dy : 1);
    if (cx >= c->w) cx = c->w - 1;
    if (cy >= c->h) cy = c->h - 1;
    int64_t v = c->data[cy * c->w + cx];
    int prec = c->prec < 1 ? 1 : c->prec > 31 ? 31 : (int)c->prec;
    if (c->sgnd) v += INT64_C(1) << (prec - 1);
    int64_t max = (INT64_C(1) << prec) - 1;
    v = v < 0 ? 0 : v > max ? max : v;
    return (int)(prec >= 8 ? v >> (prec - 8) : v << (8 - prec));
}

static inline uint8_t clamp_u8(double v) {
    return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5);
}

static dec_result j2k_to_image(const opj_image_t *im, image *img) {
    if (im->numcomps < 1 || im->x1 <= im->x0 || im->y1 <= im->y0) return DEC_BAD;
    int64_t w = (int64_t)im->x1 - im->x0, h = (int64_t)im->y1 - im->y0;
    int ch = im->numcomps >= 3 ? 3 : 1;
    for (int c = 0; c < ch; c++) {
        const opj_image_comp_t *k = &im->comps[c];
        if (!k->data || k->w == 0 || k->h == 0 || (uint64_t)k->w * k->h > (uint64_t)MAX_PIXELS)
            return DEC_BAD;
    }
    dec_result r = image_alloc(img, w, h, ch);
    if (r != DEC_OK) return r;
    bool sycc = ch == 3 && im->color_space == OPJ_CLRSPC_SYCC;
    uint8_t *dst = img->px;
    for (int64_t y = 0; y < h; y++) {
        for (int64_t x = 0; x < w; x++) {
            int s[3];
            for (int c = 0; c < ch; c++) s[c] = j2k_sample(&im->comps[c], x, y);
            if (sycc) {
                double Y = s[0], cb = s[1] - 128.0, cr = s[2] - 128.0;
                s[0] = clamp_u8(Y + 1.402 * cr);
                s[1] = clamp_u8(Y - 0.344136 * cb - 0.714136 * cr);
                s[2] = clamp_u8(Y + 1.772 * cb);
            }
            for (int c = 0; c < ch; c++) *dst++ = (uint8_t)s[c];
        }
    }
    return DEC_OK;
}

static dec_result decode_j2k(const uint8_t *data, size_t n, image *img, bool jp2) {
    memfile mf = {data, n, 0};
    opj_stream_t *st = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_codec_t *codec = opj_create_decompress(jp2 ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K);
    opj_image_t *im = NULL;
    dec_result res = DEC_OOM;
    if (!st || !codec) goto done;
    opj_stream_set_user_data(st, &mf, NULL);
    opj_stream_set_user_data_length(st, n);
    opj_stream_set_read_function(st, opj_read_mem);
    opj_stream_set_skip_function(st, opj_skip_mem);
    opj_stream_set_seek_function(st, opj_seek_mem);
    opj_set_error_handler(codec, opj_quiet, NULL);
    opj_set_warning_handler(codec, opj_quiet, NULL);
    opj_set_info_handler(codec, opj_quiet, NULL);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    res = DEC_BAD;
    if (!opj_setup_decoder(codec, &params) || !opj_read_header(st, codec, &im)) goto done;
    /* refuse oversized or many-component images before decoding any tile */
    if (im->x1 <= im->x0 || im->y1 <= im->y0 || im->numcomps < 1 || im->numcomps > 4 ||
        ((uint64_t)im->x1 - im->x0) * ((uint64_t)im->y1 - im->y0) > (uint64_t)MAX_PIXELS)
        goto done;
    if (!opj_decode(codec, st, im) || !opj_end_decompress(codec, st)) goto done;
    res = j2k_to_image(im, img);
done:
    if (im) opj_image_destroy(im);
    if (codec) opj_destroy_codec(codec);
    if (st) opj_stream_destroy(st);
    return res;
}
#else
static dec_result decode_j2k(const uint8_t *data, size_t n, image *img, bool jp2) { return DEC_NO_OPENJPEG; }
#endif

/* ------------------------------------------------------------------- BMP */

typedef struct bmp_info {
    int64_t w, h;
    bool top_down;
    unsigned bpp, compression;
    uint32_t mask[3];           /* R, G, B for 16/32 bpp */
    uint8_t palette[256][3];    /* RGB */
    unsigned n_palette;
    size_t pixel_offset;
} bmp_info;

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_ALPHABITFIELDS = 6 };

/* Value of a bit field scaled to 0..255 (Pillow truncates the same way). */
static uint8_t bmp_field(uint32_t px, uint32_t mask) {
    if (!mask) return 0;
    int shift = __builtin_ctz(mask);
    uint32_t max = mask >> shift, v = (px & mask) >> shift;
    return (uint8_t)((uint64_t)v * 255 / max);
}

static bool bmp_header(const uint8_t *d, size_t n, bmp_info *b) {
    memset(b, 0, sizeof *b);
    if (n < 26) return false;
    uint32_t hsize = rd_le32(d + 14);
    b->pixel_offset = rd_le32(d + 10);
    size_t after;
    if (hsize == 12) {  /* OS/2 BITMAPCOREHEADER */
        b->w = rd_le16(d + 18), b->h = rd_le16(d + 20), b->bpp = rd_le16(d + 24);
        after = 26;
    } else if (hsize >= 40 && hsize <= 124 && n >= 14 + (size_t)hsize) {
        b->w = (int32_t)rd_le32(d + 18), b->h = (int32_t)rd_le32(d + 22);
        b->bpp = rd_le16(d + 28), b->compression = rd_le32(d + 30);
        b->n_palette = rd_le32(d + 46);
        after = 14 + hsize;
        if (b->compression == BI_BITFIELDS || b->compression == BI_ALPHABITFIELDS) {
            const uint8_t *m = d + 54;  /* in the V2+ header, or right after a 40-byte one */
            if (hsize == 40) {
                if (n < 66) return false;
                after += b->compression == BI_ALPHABITFIELDS ? 16 : 12;
            } else if (hsize < 52) {
                return false;
            }
            for (int i = 0; i < 3; i++) b->mask[i] = rd_le32(m + 4 * i);
        }
    } else {
        return false;
    }
    if (b->h < 0) b->top_down = true, b->h = -b->h;
    if (b->w <= 0 || b->h <= 0 || b->w * b->h > MAX_PIXELS) return false;
    if (b->bpp <= 8) {
        if (b->bpp != 1 && b->bpp != 2 && b->bpp != 4 && b->bpp != 8) return false;
        unsigned max = 1u << b->bpp, entry = hsize == 12 ? 3 : 4;
        if (b->n_palette == 0 || b->n_palette > max) b->n_palette = max;
        if (after > n || (n - after) / entry < b->n_palette) return false;
        for (unsigned i = 0; i < b->n_palette; i++) {
            const uint8_t *p = d + after + i * entry;
            b->palette[i][0] = p[2], b->palette[i][1] = p[1], b->palette[i][2] = p[0];
        }
    } else if (b->compression == BI_RGB) {
        if (b->bpp == 16) b->mask[0] = 0x7C00, b->mask[1] = 0x03E0, b->mask[2] = 0x001F;
        else if (b->bpp == 24 || b->bpp == 32) b->mask[0] = 0xFF0000, b->mask[1] = 0xFF00, b->mask[2] = 0xFF;
        else return false;
    } else if (b->bpp != 16 && b->bpp != 32) {
        return false;
    }
    if (b->compression == BI_RLE8 && b->bpp != 8) return false;
    if (b->compression == BI_RLE4 && b->bpp != 4) return false;
    if (b->compression != BI_RGB && b->compression != BI_RLE8 && b->compression != BI_RLE4 &&
        b->compression != BI_BITFIELDS && b->compression != BI_ALPHABITFIELDS)
        return false;
    return b->pixel_offset <= n;
}

static void bmp_put(const bmp_info *b, image *img, int64_t x, int64_t y, unsigned index) {
    int64_t row = b->top_down ? y : b->h - 1 - y;
    uint8_t *p = img->px + (size_t)((row * b->w + x) * 3);
    if (index < b->n_palette) memcpy(p, b->palette[index], 3);
    else p[0] = p[1] = p[2] = 0;
}

static dec_result bmp_uncompressed(const uint8_t *d, const bmp_info *b, image *img,
                                   size_t stride) {
    for (int64_t y = 0; y < b->h; y++) {
        const uint8_t *row = d + b->pixel_offset + stride * (size_t)y;
        for (int64_t x = 0; x < b->w; x++) {
            if (b->bpp <= 8) {
                unsigned per = 8 / b->bpp, bit = (unsigned)(x % per) * b->bpp;
                unsigned idx = (row[x / per] >> (8 - b->bpp - bit)) & ((1u << b->bpp) - 1);
                bmp_put(b, img, x, y, idx);
                continue;
            }
            uint32_t px = b->bpp == 16 ? rd_le16(row + x * 2)
                        : b->bpp == 24 ? (uint32_t)row[x * 3] | (uint32_t)row[x * 3 + 1] << 8 |
                                             (uint32_t)row[x * 3 + 2] << 16
                                       : rd_le32(row + x * 4);
            int64_t r = b->top_down ? y : b->h - 1 - y;
            uint8_t *p = img->px + (size_t)((r * b->w + x) * 3);
            for (int c = 0; c < 3; c++) p[c] = bmp_field(px, b->mask[c]);
        }
    }
    return DEC_OK;
}

/* RLE8 / RLE4: runs and absolute blocks; pixels never written stay index 0. */
static dec_result bmp_rle(const uint8_t *d, size_t n, const bmp_info *b, image *img) {
    bool rle4 = b->compression == BI_RLE4;
    for (int64_t y = 0; y < b->h; y++)
        for (int64_t x = 0; x < b->w; x++) bmp_put(b, img, x, y, 0);
    size_t i = b->pixel_offset;
    int64_t x = 0, y = 0;
    while (i + 1 < n && y < b->h) {
        unsigned count = d[i], value = d[i + 1];
        i += 2;
        if (count) {  /* a run of count pixels */
            for (unsigned k = 0; k < count && x < b->w; k++, x++)
                bmp_put(b, img, x, y, rle4 ? (k & 1 ? value & 15 : value >> 4) : value);
        } else if (value == 0) {  /* end of line */
            x = 0, y++;
        } else if (value == 1) {  /* end of bitmap */
            break;
        } else if (value == 2) {  /* delta */
            if (i + 1 >= n) return DEC_BAD;
            x += d[i], y += d[i + 1];
            i += 2;
        } else {  /* absolute block of value pixels, padded to 16 bits */
            size_t bytes = rle4 ? (value + 1) / 2 : value;
            if (bytes > n - i) return DEC_BAD;
            for (unsigned k = 0; k < value && x < b->w; k++, x++) {
                unsigned byte = d[i + (rle4 ? k / 2 : k)];
                bmp_put(b, img, x, y, rle4 ? (k & 1 ? byte & 15 : byte >> 4) : byte);
            }
            i += bytes + (bytes & 1);
        }
    }
    return DEC_OK;
}

static dec_result decode_bmp(const uint8_t *d, size_t n, image *img) {
    bmp_info b;
    if (!bmp_header(d, n, &b)) return DEC_BAD;
    bool rle = b.compression == BI_RLE8 || b.compression == BI_RLE4;
    size_t stride = (size_t)(((b.w * b.bpp + 31) / 32) * 4);
    if (!rle && (n - b.pixel_offset) / stride < (size_t)b.h) return DEC_BAD;  /* short raster */
    dec_result r = image_alloc(img, b.w, b.h, 3);
    if (r != DEC_OK) return r;
    return rle ? bmp_rle(d, n, &b, img) : bmp_uncompressed(d, &b, img, stride);
}

/* ------------------------------------------------------------------- PNM */

static bool pnm_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Skip whitespace and # comments. */
static void pnm_skip(memfile *m) {
    while (m->pos < m->size) {
        uint8_t c = m->data[m->pos];
        if (c == '#') {
            while (m->pos < m->size && m->data[m->pos] != '\n' && m->data[m->pos] != '\r') m->pos++;
        } else if (pnm_space(c)) {
            m->pos++;
        } else {
            break;
        }
    }
}

/* A decimal number (after whitespace/comments), at most max; or -1. For P1
 * one digit is a whole number, since its samples need no separators. */
static int64_t pnm_number(memfile *m, int64_t max, bool one_digit) {
    pnm_skip(m);
    int64_t v = -1;
    while (m->pos < m->size && m->data[m->pos] >= '0' && m->data[m->pos] <= '9') {
        v = (v < 0 ? 0 : v) * 10 + (m->data[m->pos++] - '0');
        if (v > max) return -1;
        if (one_digit) break;
    }
    return v;
}

/* Pillow's scaling of a sample to 0..255: round(v / maxval * 255), halves to even. */
static uint8_t pnm_scale(int64_t v, int64_t maxval) {
    if (maxval == 255) return (uint8_t)(v > 255 ? 255 : v);
    int64_t q = v * 255, base = q / maxval, rem = q % maxval;
    if (2 * rem > maxval || (2 * rem == maxval && (base & 1))) base++;
    return (uint8_t)(base > 255 ? 255 : base);
}

static int64_t pnm_sample(memfile *m, int kind, int64_t maxval) {
    if (kind <= 3) return pnm_number(m, 65535, kind == 1);
    if (maxval < 256) return m->pos < m->size ? m->data[m->pos++] : -1;
    if (m->size - m->pos < 2) return -1;
    int64_t v = (int64_t)m->data[m->pos] << 8 | m->data[m->pos + 1];
    m->pos += 2;
    return v;
}

static dec_result decode_pnm(const uint8_t *d, size_t n, image *img) {
    memfile m = {d, n, 2};
    int kind = d[1] - '0';  /* 1..6: P1 bitmap, P2 graymap, P3 pixmap (text); P4-P6 binary */
    int64_t w = pnm_number(&m, MAX_PIXELS, false), h = pnm_number(&m, MAX_PIXELS, false);
    bool bitmap = kind == 1 || kind == 4;
    int64_t maxval = bitmap ? 1 : pnm_number(&m, 65535, false);
    if (w <= 0 || h <= 0 || maxval <= 0) return DEC_BAD;
    if (kind >= 4) {  /* exactly one whitespace byte before the raster */
        if (m.pos >= n || !pnm_space(d[m.pos])) return DEC_BAD;
        m.pos++;
    }
    int ch = kind == 3 || kind == 6 ? 3 : 1;
    /* the raster must be there before memory is spent on it: every sample
     * takes at least a byte (a bit for P4) */
    uint64_t need = kind == 4 ? (uint64_t)h * (uint64_t)((w + 7) / 8)
                              : (uint64_t)w * (uint64_t)h * (uint64_t)ch * (kind >= 5 && maxval > 255 ? 2 : 1);
    if (w > MAX_PIXELS || h > MAX_PIXELS || need > n - m.pos) return DEC_BAD;
    dec_result r = image_alloc(img, w, h, ch);
    if (r != DEC_OK) return r;
    uint8_t *dst = img->px;
    for (int64_t y = 0; y < h; y++) {
        if (kind == 4) {  /* packed bits, rows padded to bytes; 1 is black */
            size_t stride = (size_t)((w + 7) / 8);
            if (n - m.pos < stride) return DEC_BAD;
            for (int64_t x = 0; x < w; x++)
                *dst++ = (d[m.pos + x / 8] >> (7 - x % 8)) & 1 ? 0 : 255;
            m.pos += stride;
            continue;
        }
        for (int64_t i = 0; i < w * ch; i++) {
            int64_t v = pnm_sample(&m, kind, maxval);
            if (v < 0) return DEC_BAD;
            *dst++ = bitmap ? (v ? 0 : 255) : pnm_scale(v, maxval);
        }
    }
    return DEC_OK;
}

/* ------------------------------------------------------------- dispatch */

static dec_result decode_any(const uint8_t *d, size_t n, image *img) {
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    static const uint8_t jp2_sig[12] = {0, 0, 0, 0x0C, 'j', 'P', ' ', ' ', 0x0D, 0x0A, 0x87, 0x0A};
    static const uint8_t j2k_sig[4] = {0xFF, 0x4F, 0xFF, 0x51};
    if (n >= 8 && !memcmp(d, png_sig, 8)) return decode_png(d, n, img);
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) return decode_jpeg(d, n, img);
    if (n >= 12 && !memcmp(d, jp2_sig, 12)) return decode_j2k(d, n, img, true);
    if (n >= 4 && !memcmp(d, j2k_sig, 4)) return decode_j2k(d, n, img, false);
    if (n >= 4 && (!memcmp(d, "II*\0", 4) || !memcmp(d, "MM\0*", 4) || !memcmp(d, "II+\0", 4) ||
                   !memcmp(d, "MM\0+", 4)))
        return decode_tiff(d, n, img);
    if (n >= 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4)) return decode_webp(d, n, img);
    if (n >= 2 && d[0] == 'B' && d[1] == 'M') return decode_bmp(d, n, img);
    if (n >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6' && pnm_space(d[2]))
        return decode_pnm(d, n, img);
    return DEC_BAD;
}

/* ------------------------------------------------------------- operator */


static void write_pixels(const image *img, int fmt, uint8_t *out) {
    size_t n = (size_t)(img->w * img->h);
    const uint8_t *s = img->px;
    for (size_t i = 0; i < n; i++, s += img->channels) {
        uint8_t r = s[0], g = img->channels == 3 ? s[1] : s[0], b = img->channels == 3 ? s[2] : s[0];
        if (fmt == FMT_GRAY) {
            *out++ = img->channels == 1 ? r : pil_luma(r, g, b);
        } else if (fmt == FMT_RGB) {
            *out++ = r, *out++ = g, *out++ = b;
        } else {
            *out++ = b, *out++ = g, *out++ = r;
        }
    }
}

/* The error for a stream whose decoder this build left out. */
static onyx_status *missing_codec(dec_result r) {
    static const char *const what[][3] = {
        [DEC_NO_PNG] = {"PNG", "PNG", "libpng-dev"},
        [DEC_NO_JPEG] = {"JPEG", "JPEG", "libjpeg62-turbo-dev"},
        [DEC_NO_TIFF] = {"TIFF", "TIFF", "libtiff-dev"},
        [DEC_NO_WEBP] = {"WebP", "WEBP", "libwebp-dev"},
        [DEC_NO_OPENJPEG] = {"JPEG 2000", "OPENJPEG", "libopenjp2-7-dev"},
    };
    return ONYX_NOT_IMPLEMENTED("the encoded stream is %s, and this build has no %s decoder: configure "
                                "with -DONYX_WITH_%s=ON (%s)", what[r][0], what[r][0], what[r][1], what[r][2]);
}

static onyx_status *image_decoder_compute(onyx_kernel_ctx *ctx) {
    int fmt;
    ONYX_TRY(onyx_image_parse_format(ctx->node, &fmt));
    const onyx_value *x = ctx->n_in > 0 ? ctx->in[0] : NULL;
    if (!onyx_is_tensor(x) || x->dtype != ONYX_UINT8)
        return ONYX_INVALID_ARG("input encoded_stream is required and must be a uint8 tensor");
    image img = {0, 0, 0, NULL};
    dec_result r = decode_any(x->data, (size_t)x->numel, &img);
    if (r == DEC_OOM) {
        free(img.px);
        return ONYX_OOM();
    }
    if (r >= DEC_NO_PNG) return missing_codec(r);
    int64_t dims[3] = {0, 0, fmt == FMT_GRAY ? 1 : 3};
    if (r == DEC_OK) dims[0] = img.h, dims[1] = img.w;
    onyx_value *y;
    onyx_status *st = onyx_kernel_output(ctx, 0, ONYX_UINT8, 3, dims, &y);
    if (!st && r == DEC_OK) write_pixels(&img, fmt, y->data);
    free(img.px);
    return st;
}

const onyx_op_def onyx_ops_image[] = {
    {"", "ImageDecoder", 20, ONYX_OPSET_LATEST, ONYX_T(ONYX_UINT8), 0, NULL, NULL,
     image_decoder_compute},
    {0},};
