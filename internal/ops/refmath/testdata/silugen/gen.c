// gen writes ggml's CPU results for silu and swiglu on f32 rows, the
// golden files of TestSiluMatchesGGML (internal/ops/silu_golden_test.go),
// which builds the same inputs: see README.md.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-cpu.h"

enum { ROW = 100, NPAT = 8192, NDENSE = 4096 };

static const float thresholds[] = {88.72283f, 103.97208f, 87.33655f, 133.08f, 0.34657359f, 1.0f};

static float from_bits(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static uint32_t to_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

// inputs fills x (if not NULL) and returns the count, padded with zeros to
// whole rows.
static int inputs(float * x) {
    int n = 0;
    for (uint32_t i = 0; i < NPAT; i++) { // bit patterns: every sign and exponent, NaNs and infinities
        if (x) x[n] = from_bits(i * 524287u);
        n++;
    }
    for (int i = 0; i < NDENSE; i++) { // [-24, 24) in steps of 1/128 (exact)
        if (x) x[n] = (float) (-24.0 + 48.0 * i / NDENSE);
        n++;
    }
    for (size_t t = 0; t < sizeof thresholds / sizeof thresholds[0]; t++) { // 16 floats around each threshold
        for (int s = -1; s <= 1; s += 2) {
            for (int k = -8; k < 8; k++) {
                if (x) x[n] = from_bits((uint32_t) ((int64_t) to_bits(s * thresholds[t]) + k));
                n++;
            }
        }
    }
    while (n % ROW) {
        if (x) x[n] = 0;
        n++;
    }
    return n;
}

static void write_file(const char * dir, const char * name, const float * v, int n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE * f = fopen(path, "wb");
    if (!f || fwrite(v, 4, n, f) != (size_t) n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gen OUTDIR\n");
        return 2;
    }
    const int n = inputs(NULL);
    struct ggml_init_params ip = {.mem_size = (size_t) 16 * n * 4 + (64 << 20), .mem_buffer = NULL, .no_alloc = false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ROW, n / ROW);
    struct ggml_tensor * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ROW, n / ROW);
    inputs((float *) a->data);
    float * gd = (float *) g->data;
    for (int i = 0; i < n; i++) {
        gd[i] = (float) (i % 29 - 14) * 0.37f;
    }
    struct ggml_tensor * silu = ggml_silu(ctx, a);
    struct ggml_tensor * swiglu = ggml_swiglu_split(ctx, a, g);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, silu);
    ggml_build_forward_expand(gf, swiglu);
    if (ggml_graph_compute_with_ctx(ctx, gf, 1) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "compute failed\n");
        return 1;
    }
    write_file(argv[1], "silu.f32", (const float *) silu->data, n);
    write_file(argv[1], "swiglu.f32", (const float *) swiglu->data, n);
    printf("%d values\n", n);
    ggml_free(ctx);
    return 0;
}
