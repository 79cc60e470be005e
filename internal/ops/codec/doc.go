// Package codec holds ggml's block formats, bit-exact with ggml's
// reference quantizers and dequantizers (quantize_row_*_ref,
// dequantize_row_* of ggml-quants.c): q8_0, q4_0, q4_1, q5_0, q5_1, the
// k-quants, iq4_nl/iq4_xs, the ternary and fp4 formats, bf16, and the
// vector kernels of the q8_0 and q4_0 quantizers (the same bytes, chosen
// once from the CPU's features). It knows no ggml type enum: package ops
// maps each Type to its block functions (QuantizeRow, DequantizeRow).
//
// codec imports only the standard library and ops/half. It never prints
// and never exits.
package codec
