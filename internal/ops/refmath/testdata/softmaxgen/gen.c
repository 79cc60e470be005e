// gen writes ggml's CPU results for soft_max, the golden file of
// TestSoftMaxMatchesGGML (internal/ops/softmax_golden_test.go), which
// builds the same inputs: see README.md.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ggml.h"
#include "ggml-cpu.h"

// The cases: row length, rows, heads (ne2), scale, max_bias, with sinks.
struct tcase { int ne0, ne1, ne2; float scale, max_bias; int sinks; };
static const struct tcase cases[] = {
    {4096, 3, 2, 0.125f, 0.0f, 0}, // vector blocks only
    {100, 4, 2, 0.5f, 0.0f, 0},    // six blocks and a tail of four
    {8, 4, 1, 1.0f, 0.0f, 0},      // the tail only
    {100, 2, 4, 0.25f, 8.0f, 1},   // ALiBi and sinks
};

static uint32_t state = 12345;

// next is the inputs' generator: multiples of 1/4096 in [-8, 8), exact in
// float32; softmaxGoldenNext in the Go test is the same.
static float next(void) {
    state = state * 1664525u + 1013904223u;
    return (float) ((state >> 8) & 0xffff) / 4096.0f - 8.0f;
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
    int total = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct tcase tc = cases[c];
        struct ggml_init_params ip = {.mem_size = 64 << 20, .mem_buffer = NULL, .no_alloc = false};
        struct ggml_context * ctx = ggml_init(ip);
        struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, tc.ne0, tc.ne1, tc.ne2);
        struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, tc.ne0, tc.ne1);
        float * ad = (float *) a->data;
        for (int i = 0; i < tc.ne0 * tc.ne1 * tc.ne2; i++) {
            ad[i] = next();
        }
        float * md = (float *) mask->data;
        for (int i = 0; i < tc.ne0 * tc.ne1; i++) {
            const float v = next();
            md[i] = i % 13 == 5 ? -INFINITY : v / 4;
        }
        struct ggml_tensor * out = ggml_soft_max_ext(ctx, a, mask, tc.scale, tc.max_bias);
        if (tc.sinks) {
            struct ggml_tensor * sk = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, tc.ne2);
            for (int h = 0; h < tc.ne2; h++) {
                ((float *) sk->data)[h] = next();
            }
            ggml_soft_max_add_sinks(out, sk);
        }
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, out);
        if (ggml_graph_compute_with_ctx(ctx, gf, 1) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "compute failed\n");
            return 1;
        }
        const int n = tc.ne0 * tc.ne1 * tc.ne2;
        if (fwrite(out->data, 4, n, f) != (size_t) n) {
            perror(argv[1]);
            return 1;
        }
        total += n;
        ggml_free(ctx);
    }
    if (fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    printf("%d values\n", total);
    return 0;
}
