#!/usr/bin/env python3
"""Writes llama3-8b.txt: the ops of a llama-3-8B decoder layer (4096 wide,
32 heads of 128, 8 KV heads, FFN 14336, a 4096-token f16 KV cache, a
32000-row q8_0 embedding table) plus a 32-expert MUL_MAT_ID, at n = 1, 7
and 32 tokens (MUL_MAT also n = 2 and 512), in the test-file format of
test-backend-ops --test-file (internal/ops/testfile's doc). Both sides of the
side-by-side in docs/performance.md read it:

    et run-op --test-file testcases/perf/llama3-8b.txt --perf
    test-backend-ops perf -b CPU --test-file testcases/perf/llama3-8b.txt

Run it from anywhere: python3 testcases/perf/gen-llama3-8b.py
"""
import os
import struct

# ggml d99724f enum values (internal/ops/abi/manifest/ggml-d99724f.yaml).
OP = dict(ADD=2, MUL=7, NORM=24, RMS_NORM=25, MUL_MAT=29, MUL_MAT_ID=30,
          CPY=34, CONT=35, GET_ROWS=40, SET_ROWS=42, SOFT_MAX=46, ROPE=48,
          FLASH_ATTN_EXT=74, UNARY=91, GLU=100)
T = dict(f32=(0, 1, 4), f16=(1, 1, 2), q4_0=(2, 32, 18), q8_0=(8, 32, 34),
         q4_K=(12, 256, 144), q6_K=(14, 256, 210), i32=(26, 1, 4), i64=(27, 1, 8))
UNARY_SILU, GLU_SWIGLU, ROPE_NEOX, PREC_F32 = 10, 2, 2, 10


def fbits(x):
    return struct.unpack('<i', struct.pack('<f', x))[0]


def nb(t, ne):
    _, bs, ts = T[t]
    s0 = ts
    s1 = ts * ne[0] // bs
    return [s0, s1, s1 * ne[1], s1 * ne[1] * ne[2]]


def src(t, ne, strides=None):
    ne = list(ne) + [1] * (4 - len(ne))
    return (t, ne, strides or nb(t, ne))


def line(op, t, ne, params, srcs, name):
    ne = list(ne) + [1] * (4 - len(ne))
    p = [0] * 16
    for i, v in params.items():
        p[i] = v
    f = [OP[op], T[t][0], *ne, 16, *p, len(srcs)]
    for st, sne, snb in srcs:
        f += [T[st][0], *sne, *snb]
    return ' '.join(str(x) for x in f) + ' ' + name


def layer(n):
    E, H, HKV, D, FF, KV = 4096, 32, 8, 128, 14336, 4096
    eps = {0: fbits(1e-5)}
    scale = fbits(1 / D ** 0.5)
    yield line('GET_ROWS', 'f32', [E, n], {}, [src('q8_0', [E, 32000]), src('i32', [n])], f'get_rows_q8_0-n{n}')
    yield line('RMS_NORM', 'f32', [E, n], eps, [src('f32', [E, n])], f'rms_norm-n{n}')
    yield line('NORM', 'f32', [E, n], eps, [src('f32', [E, n])], f'norm-n{n}')
    yield line('MUL', 'f32', [E, n], {}, [src('f32', [E, n]), src('f32', [E])], f'mul-n{n}')
    yield line('ADD', 'f32', [E, n], {}, [src('f32', [E, n]), src('f32', [E, n])], f'add-n{n}')
    rope = {1: D, 2: ROPE_NEOX, 4: 8192, 5: fbits(500000.0), 6: fbits(1.0), 8: fbits(1.0),
            9: fbits(32.0), 10: fbits(1.0)}
    yield line('ROPE', 'f32', [D, H, n], rope, [src('f32', [D, H, n]), src('i32', [n])], f'rope_neox-n{n}')
    # K of n tokens into the f16 cache (ggml's src order: the rows, the ids, the cache).
    yield line('SET_ROWS', 'f16', [HKV * D, KV], {}, [src('f32', [HKV * D, n]), src('i64', [n]),
                                                      src('f16', [HKV * D, KV])], f'set_rows_f16-n{n}')
    yield line('CPY', 'f16', [D, HKV, n], {}, [src('f32', [D, HKV, n]), src('f16', [D, HKV, n])], f'cpy_f32_f16-n{n}')
    # kqv_out: [D, n, H] permuted to [D, H, n], made contiguous.
    yield line('CONT', 'f32', [E, n], {}, [src('f32', [D, H, n], [4, 4 * D * n, 4 * D, 4 * D * n * H])], f'cont-n{n}')
    yield line('SOFT_MAX', 'f32', [KV, n, H], {0: scale}, [src('f32', [KV, n, H]), src('f32', [KV, n])], f'soft_max-n{n}')
    yield line('GLU', 'f32', [FF, n], {0: GLU_SWIGLU}, [src('f32', [FF, n]), src('f32', [FF, n])], f'swiglu-n{n}')
    yield line('UNARY', 'f32', [FF, n], {0: UNARY_SILU}, [src('f32', [FF, n])], f'silu-n{n}')
    # One query block against the whole cache: q [D, n, H] viewed as heads,
    # K and V views of the [HKV*D, KV] cache, the f16 mask [KV, n].
    kv = [2, 2 * HKV * D, 2 * D, 2 * HKV * D * KV]
    yield line('FLASH_ATTN_EXT', 'f32', [D, H, n], {0: scale, 3: PREC_F32},
               [src('f32', [D, n, H], [4, 4 * D * H, 4 * D, 4 * D * H * n]), src('f16', [D, KV, HKV], kv),
                src('f16', [D, KV, HKV], kv), src('f16', [KV, n])], f'flash_attn_ext-n{n}')
    # 32 experts of [2048 -> 1792], 4 used per token.
    for t in ('q4_0', 'q8_0'):
        yield line('MUL_MAT_ID', 'f32', [1792, 4, n], {}, [src(t, [2048, 1792, 32]), src('f32', [2048, 4, n]),
                                                          src('i32', [4, n])], f'mul_mat_id_{t}-n{n}')


def mul_mats():
    for n in (1, 2, 7, 32, 512):
        for t in ('f32', 'f16', 'q8_0', 'q4_0', 'q4_K', 'q6_K'):
            if n == 512 and t in ('q4_K', 'q6_K'):
                continue
            yield line('MUL_MAT', 'f32', [4096, n], {}, [src(t, [14336, 4096]), src('f32', [14336, n])],
                       f'mul_mat_{t}-m4096-k14336-n{n}')


def main():
    out = [l for n in (1, 7, 32) for l in layer(n)] + list(mul_mats())
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'llama3-8b.txt')
    with open(path, 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
