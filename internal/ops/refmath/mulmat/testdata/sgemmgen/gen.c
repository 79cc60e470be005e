// gen writes ggml's CPU results for MUL_MAT of f32 and f16 weights at
// shapes ggml computes by llamafile's tinyBLAS, the golden file of
// TestSgemmDotMatchesGGML (internal/ops/mulmat_sgemm_test.go), which
// builds the same inputs: see README.md.
#include <stdint.h>
#include <stdio.h>

#include "ggml.h"
#include "ggml-cpu.h"

// The cases: weight type, k, m (weight rows), n (src1 columns).
struct tcase { enum ggml_type t; int k, m, n; };
static const struct tcase cases[] = {
    {GGML_TYPE_F32, 4096, 8, 3},
    {GGML_TYPE_F32, 48, 12, 5},
    {GGML_TYPE_F16, 4096, 8, 3},
    {GGML_TYPE_F16, 80, 4, 2},
};

static uint32_t state = 4242;

// next is the inputs' generator: multiples of 1/32768 in [-1, 1), exact
// in float32 (softmaxGoldenState in the Go tests, divided by 8).
static float next(void) {
    state = state * 1664525u + 1013904223u;
    return ((float) ((state >> 8) & 0xffff) / 4096.0f - 8.0f) / 8.0f;
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: gen OUTFILE\n");
        return 2;
    }
    FILE * f = fopen(argv[1], "wb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct tcase tc = cases[c];
        struct ggml_init_params ip = {.mem_size = 64 << 20, .mem_buffer = NULL, .no_alloc = false};
        struct ggml_context * ctx = ggml_init(ip);
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, tc.t, tc.k, tc.m);
        struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, tc.k, tc.n);
        for (int i = 0; i < tc.k * tc.m; i++) {
            const float v = next();
            if (tc.t == GGML_TYPE_F16) {
                ((ggml_fp16_t *) a->data)[i] = ggml_fp32_to_fp16(v);
            } else {
                ((float *) a->data)[i] = v;
            }
        }
        for (int i = 0; i < tc.k * tc.n; i++) {
            ((float *) b->data)[i] = next();
        }
        struct ggml_tensor * out = ggml_mul_mat(ctx, a, b);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, out);
        if (ggml_graph_compute_with_ctx(ctx, gf, 1) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "compute failed\n");
            return 1;
        }
        const int n = tc.m * tc.n;
        if (fwrite(out->data, 4, n, f) != (size_t) n) {
            perror(argv[1]);
            return 1;
        }
        ggml_free(ctx);
    }
    if (fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
