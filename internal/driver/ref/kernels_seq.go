package ref

import (
	"fmt"
	"math"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// The kernels of the sequence-mixing ops (RWKV_WKV6, RWKV_WKV7,
// GATED_DELTA_NET), whose params need more than the generic opKernel: raw
// device pointers, or sizes passed as scalars (reference
// ggml-et-backend.md §1.2).

// maxSeqDim bounds the sizes a sequence kernel accepts from its scalars
// (a garbage int32 must not make the model allocate or loop for ever; the
// device memory check below bounds the product).
const maxSeqDim = 1 << 24

// ptrTensor is the dense f32 tensor of shape ne that a raw float* points
// at, as a kernel that gets only pointers and sizes walks it.
func (r *run) ptrTensor(field string, ptr uint64, ne [ops.MaxDims]int64, store bool) (*ops.Tensor, error) {
	d := abi.TensorDesc{Type: ops.F32, Ne: ne, Nb: ops.ContiguousStrides(ops.F32, ne), Data: ptr}
	if ptr == 0 {
		return nil, accessFault(store, 0, fmt.Sprintf("pointer %s is NULL", field))
	}
	t, err := r.mem.tensor(field, d, store)
	if err != nil {
		return nil, err
	}
	r.cost.Bytes += int64(t.NBytes())
	return t, nil
}

// rwkvSizes reads and checks C, H, S, T and n_seqs.
func rwkvSizes(v abi.Values) (s, h, t, nSeqs int64, err error) {
	c, h, s, t, nSeqs := v.Int("C"), v.Int("H"), v.Int("S"), v.Int("T"), v.Int("n_seqs")
	for _, f := range []struct {
		name string
		x    int64
		min  int64
	}{{"H", h, 1}, {"S", s, 1}, {"T", t, 0}, {"n_seqs", nSeqs, 1}} {
		if f.x < f.min || f.x > maxSeqDim {
			return 0, 0, 0, 0, userError(fmt.Sprintf("%s = %d is out of range [%d, %d]", f.name, f.x, f.min, maxSeqDim))
		}
	}
	if c != s*h {
		return 0, 0, 0, 0, userError(fmt.Sprintf("C = %d, want S*H = %d*%d", c, s, h))
	}
	if t%nSeqs != 0 {
		return 0, 0, 0, 0, userError(fmt.Sprintf("T = %d tokens do not split into n_seqs = %d sequences", t, nSeqs))
	}
	return s, h, t, nSeqs, nil
}

// kWKV runs rwkv_wkv6_f32 or rwkv_wkv7_f32: the params are raw device
// pointers and C, H, S, T, n_seqs. The kernel walks every per-token input
// as a dense [S, H, T] array, tf (wkv6) as [S, H], the state as
// [S*S*H, n_seqs] and writes dst as [C, T + S*n_seqs].
func kWKV(op ops.Op, fields []string, tf string) kernelFunc {
	return func(r *run, v abi.Values) error {
		s, h, t, nSeqs, err := rwkvSizes(v)
		if err != nil {
			return err
		}
		srcs := make([]*ops.Tensor, len(fields))
		for i, f := range fields {
			ne := [ops.MaxDims]int64{s, h, t, 1}
			switch f {
			case tf:
				ne = [ops.MaxDims]int64{s, h, 1, 1}
			case "state_in":
				ne = [ops.MaxDims]int64{s * s * h, nSeqs, 1, 1}
			}
			if srcs[i], err = r.ptrTensor(f, v.Uint(f), ne, false); err != nil {
				return err
			}
		}
		dst, err := r.ptrTensor("dst", v.Uint("dst"), [ops.MaxDims]int64{s * h, t + s*nSeqs, 1, 1}, true)
		if err != nil {
			return err
		}
		return r.compute(op, dst, srcs, nil)
	}
}

var (
	kWKV6 = kWKV(ops.OpRWKVWKV6, []string{"k", "v", "r", "tf", "td", "state_in"}, "tf")
	kWKV7 = kWKV(ops.OpRWKVWKV7, []string{"r", "w", "k", "v", "a", "b", "state_in"}, "")
)

// kGatedDeltaNet is gated_delta_net_f32 {q, k, v, g, beta, state_in, dst,
// S_v, H, H_q, H_k, n_tokens, n_seqs, n_seqs_q, n_seqs_k, kda, K, scale}.
// The kernel loops over the scalar sizes and reads the tensors through
// their data and nb: each source is rebuilt with the shape the scalars
// give it (q [S_v, H_q, n_tokens, n_seqs_q], k [S_v, H_k, ...], v, g
// [kda ? S_v : 1, H, ...], beta [1, H, ...], state [S_v, S_v, H, n_seqs])
// and its own strides, so sizes that disagree with the tensors fail
// here as they would on the device.
func kGatedDeltaNet(r *run, v abi.Values) error {
	get := func(name string, lo int64) (int64, error) {
		x := v.Int(name)
		if x < lo || x > maxSeqDim {
			return 0, userError(fmt.Sprintf("%s = %d is out of range [%d, %d]", name, x, lo, maxSeqDim))
		}
		return x, nil
	}
	var sz [8]int64
	for i, name := range []string{"S_v", "H", "H_q", "H_k", "n_tokens", "n_seqs", "n_seqs_q", "n_seqs_k"} {
		lo := int64(1)
		if name == "n_tokens" {
			lo = 0
		}
		x, err := get(name, lo)
		if err != nil {
			return err
		}
		sz[i] = x
	}
	sv, h, hq, hk, nt, ns, nsq, nsk := sz[0], sz[1], sz[2], sz[3], sz[4], sz[5], sz[6], sz[7]
	kda := v.Int("kda")
	if kda != 0 && kda != 1 {
		return userError(fmt.Sprintf("kda = %d, want 0 or 1", kda))
	}
	k, err := get("K", 1)
	if err != nil {
		return err
	}
	if want := 1 / float32(math.Sqrt(float64(float32(sv)))); v.Float("scale") != want {
		return userError(fmt.Sprintf("scale = %g, want 1/sqrtf(S_v) = %g (the reference math scales by 1/sqrtf(S_v))", v.Float("scale"), want))
	}
	gw := int64(1)
	if kda == 1 {
		gw = sv
	}
	shapes := map[string][ops.MaxDims]int64{
		"q":        {sv, hq, nt, nsq},
		"k":        {sv, hk, nt, nsk},
		"v":        {sv, h, nt, ns},
		"g":        {gw, h, nt, ns},
		"beta":     {1, h, nt, ns},
		"state_in": {sv, sv, h, ns},
	}
	fields := []string{"q", "k", "v", "g", "beta", "state_in"}
	srcs := make([]*ops.Tensor, len(fields))
	for i, f := range fields {
		d, ok := v.Tensor(f)
		if !ok {
			return userError(fmt.Sprintf("tensor %s is absent", f))
		}
		if d.Type != ops.F32 {
			return userError(fmt.Sprintf("tensor %s is %s, want f32", f, d.Type))
		}
		d.Ne = shapes[f]
		t, err := r.mem.tensor(f, d, false)
		if err != nil {
			return err
		}
		r.cost.Bytes += int64(t.NBytes())
		srcs[i] = t
	}
	dst, err := r.store(v, "dst", ops.F32)
	if err != nil {
		return err
	}
	if want := [ops.MaxDims]int64{sv * h, nt*ns + k*sv*ns, 1, 1}; dst.Ne != want {
		return userError(fmt.Sprintf("dst %s, want [S_v*H, n_tokens*n_seqs + K*S_v*n_seqs] = %v", dst.ShapeString(), want))
	}
	return r.compute(ops.OpGatedDeltaNet, dst, srcs, map[string]any{"K": k})
}
