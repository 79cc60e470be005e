// quantgen writes golden files for et's host codecs from ggml's own
// reference code: ggml-quants.c (quantize_row_*_ref, dequantize_row_*) and
// ggml-impl.h (fp32 <-> bf16). See README.md for how to build and run it.
//
// Output, into the directory given as argv[1] (all little-endian):
//   inputs.f32      NROWS rows of NCOLS float32, the quantizer inputs
//   <type>.q        the inputs quantized row by row (ggml's row layout)
//   <type>.deq      <type>.q dequantized back to float32
//   <type>.rnd      NRND blocks of random bytes (f16 scale fields kept finite)
//   <type>.rnd.deq  <type>.rnd dequantized to float32
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGML_COMMON_DECL_C
#include "ggml-common.h"
#include "ggml-impl.h"
#include "ggml-quants.h"

#define NROWS 26
#define NCOLS 256
#define NRND_K 8   // random super-blocks for 256-element types
#define NRND_32 64 // random blocks for 32..128-element types

// ggml-quants.c needs these from ggml.c; the reference paths used here
// never reach them (they serve the iq* and imatrix code).
void ggml_abort(const char * file, int line, const char * fmt, ...) {
    fprintf(stderr, "ggml_abort at %s:%d: %s\n", file, line, fmt);
    abort();
}
size_t ggml_row_size(enum ggml_type type, int64_t ne) { (void)type; (void)ne; abort(); }
const char * ggml_type_name(enum ggml_type type) { (void)type; return "?"; }
size_t ggml_type_size(enum ggml_type type) { (void)type; abort(); }

static uint64_t rng_state;
static uint64_t next_u64(void) { // splitmix64
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
// uniform in [0, 1): 24 random bits, exact in float
static float u01(void) { return (float)(next_u64() >> 40) * (1.0f / 16777216.0f); }
static float upm1(void) { return 2.0f * u01() - 1.0f; }

static void make_inputs(float * x) {
    rng_state = 20260601;
    for (int r = 0; r < NROWS; r++) {
        float * row = x + r * NCOLS;
        for (int i = 0; i < NCOLS; i++) {
            float v = 0;
            switch (r) {
            case 0: v = 0; break;                                    // zeros
            case 1: case 2: case 3: case 4: v = upm1(); break;       // uniform [-1, 1)
            case 5: v = upm1() * 1e-6f; break;                       // tiny: f16 subnormal scales
            case 6: v = upm1() * 1e-20f; break;                      // tinier: scales underflow
            case 7: v = upm1() * 3e4f; break;                        // huge (f16 scales stay finite)
            case 8: v = -(0.5f + u01()); break;                      // negative only
            case 9: v = 0.1f + u01(); break;                         // positive only
            case 10: v = 0.37f; break;                               // constant
            case 11: v = -1.5f; break;                               // constant, negative
            case 12: v = (i % 37 == 5) ? (i & 64 ? -5.0f : 5.0f) : 0.01f * upm1(); break; // outliers
            case 13: v = 1.5f * (u01() + u01() + u01() + u01() - 2.0f); break;           // bell-shaped
            case 14: v = -1.0f + 2.0f * (float)i / (NCOLS - 1); break;                    // ramp
            case 15: v = (float)((int)(next_u64() % 33) - 16) / 16.0f; break;             // ties k/16
            case 16: v = upm1() * powf(10.0f, (float)((i / 16) % 8 - 4)); break;          // 1e-4..1e3 per 16
            case 17: v = (next_u64() % 10 == 0) ? upm1() : 0.0f; break;                   // sparse
            case 18: v = (i & 1) ? -1.0f : 1.0f; break;                                   // alternating
            case 19: v = (float)((int)(next_u64() % 16) - 8); break;                      // small integers
            case 20: v = i < NCOLS / 2 ? 0.0f : upm1(); break;                            // half zero
            case 21: v = 100.0f * u01(); break;                                           // 0..100
            case 22: { float u = upm1(); v = 2.0f * u * u * u; } break;                   // skewed
            case 23: v = upm1() * ((i / 32) % 2 ? 1e3f : 1e-3f); break;                   // 1e-3 / 1e3 per 32
            case 24: v = (i % 16 == 3 ? nextafterf(1.0f, 0.0f) : 0.9f * upm1()) * ldexpf(1.0f, (i / 16) % 8 - 4); break; // max just below 2^k
            case 25: v = upm1() * powf(10.0f, (float)((i / 16) % 8) - 4.5f); break;        // 3e-5..3e3 per 16
            }
            row[i] = v;
        }
    }
}

static void write_file(const char * dir, const char * name, const void * p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE * f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

typedef void (*quant_fn)(const float *, void *, int64_t);
typedef void (*dequant_fn)(const void *, float *, int64_t);

struct codec {
    const char * name;
    int blck, size;
    quant_fn q;
    dequant_fn dq;
    int f16_offs[2]; // byte offsets of the f16 scale fields in a block (-1: none)
};

static void q_bf16(const float * x, void * y, int64_t k) {
    ggml_bf16_t * o = y;
    for (int64_t i = 0; i < k; i++) o[i] = ggml_compute_fp32_to_bf16(x[i]);
}
static void dq_bf16(const void * x, float * y, int64_t k) {
    const ggml_bf16_t * in = x;
    for (int64_t i = 0; i < k; i++) y[i] = ggml_compute_bf16_to_fp32(in[i]);
}

#define QF(t) (quant_fn)quantize_row_##t##_ref
#define DF(t) (dequant_fn)dequantize_row_##t
static const struct codec codecs[] = {
    {"bf16", 1, 2, q_bf16, dq_bf16, {-1, -1}},
    {"q4_0", QK4_0, sizeof(block_q4_0), QF(q4_0), DF(q4_0), {0, -1}},
    {"q4_1", QK4_1, sizeof(block_q4_1), QF(q4_1), DF(q4_1), {0, 2}},
    {"q5_0", QK5_0, sizeof(block_q5_0), QF(q5_0), DF(q5_0), {0, -1}},
    {"q5_1", QK5_1, sizeof(block_q5_1), QF(q5_1), DF(q5_1), {0, 2}},
    {"q8_0", QK8_0, sizeof(block_q8_0), QF(q8_0), DF(q8_0), {0, -1}},
    {"q2_K", QK_K, sizeof(block_q2_K), QF(q2_K), DF(q2_K), {offsetof(block_q2_K, d), offsetof(block_q2_K, dmin)}},
    {"q3_K", QK_K, sizeof(block_q3_K), QF(q3_K), DF(q3_K), {offsetof(block_q3_K, d), -1}},
    {"q4_K", QK_K, sizeof(block_q4_K), QF(q4_K), DF(q4_K), {offsetof(block_q4_K, d), offsetof(block_q4_K, dmin)}},
    {"q5_K", QK_K, sizeof(block_q5_K), QF(q5_K), DF(q5_K), {offsetof(block_q5_K, d), offsetof(block_q5_K, dmin)}},
    {"q6_K", QK_K, sizeof(block_q6_K), QF(q6_K), DF(q6_K), {offsetof(block_q6_K, d), -1}},
    {"q1_0", QK1_0, sizeof(block_q1_0), QF(q1_0), DF(q1_0), {0, -1}},
    {"q2_0", QK2_0, sizeof(block_q2_0), QF(q2_0), DF(q2_0), {0, -1}},
    {"tq1_0", QK_K, sizeof(block_tq1_0), QF(tq1_0), DF(tq1_0), {offsetof(block_tq1_0, d), -1}},
    {"tq2_0", QK_K, sizeof(block_tq2_0), QF(tq2_0), DF(tq2_0), {offsetof(block_tq2_0, d), -1}},
    {"mxfp4", QK_MXFP4, sizeof(block_mxfp4), QF(mxfp4), DF(mxfp4), {-1, -1}},
    {"nvfp4", QK_NVFP4, sizeof(block_nvfp4), QF(nvfp4), DF(nvfp4), {-1, -1}},
    {"iq4_nl", QK4_NL, sizeof(block_iq4_nl), QF(iq4_nl), DF(iq4_nl), {0, -1}},
    {"iq4_xs", QK_K, sizeof(block_iq4_xs), QF(iq4_xs), DF(iq4_xs), {0, -1}},
};

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: quantgen OUTDIR\n");
        return 2;
    }
    const char * dir = argv[1];
    static float x[NROWS * NCOLS], y[NROWS * NCOLS];
    static uint8_t q[NROWS * NCOLS * 4];
    make_inputs(x);
    write_file(dir, "inputs.f32", x, sizeof x);
    char name[64];
    for (size_t c = 0; c < sizeof codecs / sizeof codecs[0]; c++) {
        const struct codec * k = &codecs[c];
        size_t row_bytes = (size_t)(NCOLS / k->blck) * k->size;
        for (int r = 0; r < NROWS; r++) {
            k->q(x + r * NCOLS, q + r * row_bytes, NCOLS);
        }
        snprintf(name, sizeof name, "%s.q", k->name);
        write_file(dir, name, q, NROWS * row_bytes);
        for (int r = 0; r < NROWS; r++) {
            k->dq(q + r * row_bytes, y + r * NCOLS, NCOLS);
        }
        snprintf(name, sizeof name, "%s.deq", k->name);
        write_file(dir, name, y, sizeof y);

        // random blocks: arbitrary quants and scales, finite f16 fields
        rng_state = 777 + c;
        int nblk = k->blck == QK_K ? NRND_K : k->blck == 1 ? NCOLS : NRND_32 * 32 / k->blck;
        size_t nb = (size_t)nblk * k->size;
        for (size_t i = 0; i < nb; i++) q[i] = (uint8_t)next_u64();
        for (int b = 0; b < nblk; b++) {
            for (int f = 0; f < 2; f++) {
                if (k->f16_offs[f] < 0) continue;
                uint8_t * h = q + (size_t)b * k->size + k->f16_offs[f];
                if ((h[1] & 0x7c) == 0x7c) h[1] &= ~0x40; // inf/NaN exponent -> finite
            }
        }
        snprintf(name, sizeof name, "%s.rnd", k->name);
        write_file(dir, name, q, nb);
        k->dq(q, y, (int64_t)nblk * k->blck);
        snprintf(name, sizeof name, "%s.rnd.deq", k->name);
        write_file(dir, name, y, (size_t)nblk * k->blck * sizeof(float));
    }
    return 0;
}
