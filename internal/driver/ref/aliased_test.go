package ref

import (
	"runtime"
	"slices"
	"testing"

	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// set_rows into its own first source (ggml-et's KV-cache store) runs on
// dst directly: no scratch copy of the whole cache per launch.
func TestRunAliasedSetRowsInPlace(t *testing.T) {
	info, _ := ops.Lookup(string(ops.OpSetRows))
	p, err := info.Normalize(nil)
	if err != nil {
		t.Fatal(err)
	}
	const width, rows = 1024, 512 // a 1 MiB f16 cache
	vals := make([]float32, width*rows)
	for i := range vals {
		vals[i] = float32(i%97) / 8
	}
	cache := ops.FromF32(ops.F16, []int64{width, rows}, vals)
	before := slices.Clone(cache.Buf)
	src := ops.FromF32(ops.F32, []int64{width, 2}, vals[:2*width])
	idx := ops.FromInts(ops.I64, []int64{2}, []int64{300, 7})

	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if err := runAliased(info, cache, []*ops.Tensor{cache, src, idx}, p); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > uint64(len(cache.Buf))/4 {
		t.Errorf("in-place set_rows allocated %d bytes for a %d-byte cache: it copied the cache", got, len(cache.Buf))
	}
	rowBytes := width * 2
	for r := 0; r < rows; r++ {
		got, was := cache.Buf[r*rowBytes:(r+1)*rowBytes], before[r*rowBytes:(r+1)*rowBytes]
		want := was
		switch r {
		case 300:
			want = before[:rowBytes] // source row 0 holds the values of cache row 0
		case 7:
			want = before[rowBytes : 2*rowBytes]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cache row %d is wrong after the in-place set_rows", r)
		}
	}
}

// When another source shares dst's storage, the launch still computes
// from the sources as they were: set_rows swapping two rows of the cache
// by reading them through a view of it.
func TestRunAliasedSetRowsReadingItself(t *testing.T) {
	info, _ := ops.Lookup(string(ops.OpSetRows))
	p, _ := info.Normalize(nil)
	cache := ops.FromF32(ops.F32, []int64{4, 3}, []float32{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2})
	rows01, err := ops.View(cache, []int64{4, 2}, nil, 0) // rows 0 and 1 of the cache
	if err != nil {
		t.Fatal(err)
	}
	idx := ops.FromInts(ops.I64, []int64{2}, []int64{1, 0})
	if err := runAliased(info, cache, []*ops.Tensor{cache, rows01, idx}, p); err != nil {
		t.Fatal(err)
	}
	if got, want := cache.ToF32(), []float32{1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("swapping rows through a view of the cache gave %v, want %v", got, want)
	}
}

// The decoded-params cache gives each params blob its own values, and a
// full cache starts afresh instead of growing.
func TestDecodeCache(t *testing.T) {
	m := abi.Default()
	l, ok := m.LayoutFor("rms_norm_f32")
	if !ok {
		t.Fatal("no rms_norm_f32 layout")
	}
	blob := func(eps float32) []byte {
		var v abi.Values
		v.SetTensor("src0", abi.TensorDesc{Type: ops.F32, Ne: [4]int64{8, 1, 1, 1}, Nb: [4]uint64{4, 32, 32, 32}, Data: 0x1000})
		v.SetTensor("dst", abi.TensorDesc{Type: ops.F32, Ne: [4]int64{8, 1, 1, 1}, Nb: [4]uint64{4, 32, 32, 32}, Data: 0x2000})
		v.SetFloat("eps", eps)
		b, err := m.Encode(l, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var c decodeCache
	for i := 0; i < 3*maxCachedParams; i++ {
		eps := float32(i) / 1024
		for range 2 {
			v, _, err := c.decode(m, l, "rms_norm_f32", blob(eps))
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Float("eps"); got != eps {
				t.Fatalf("params %d: eps %g from the cache, want %g", i, got, eps)
			}
		}
		if c.n > maxCachedParams || len(c.m["rms_norm_f32"]) > maxCachedParams {
			t.Fatalf("the cache holds %d entries, more than %d", c.n, maxCachedParams)
		}
	}
}

// A cache entry remembers each compute call's normalized params in call
// order: a kernel that computes twice (a fused one) gets each call's own.
func TestNormalizeMemo(t *testing.T) {
	rms, _ := ops.Lookup(string(ops.OpRMSNorm))
	scale, _ := ops.Lookup(string(ops.OpScale))
	e := &cachedParams{}
	for launch := 0; launch < 2; launch++ {
		r := &run{entry: e}
		p1, err := r.normalize(rms, map[string]any{"eps": 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		p2, err := r.normalize(scale, map[string]any{"scale": 2.5})
		if err != nil {
			t.Fatal(err)
		}
		if p1.F32("eps") != 1e-3 || p2.F32("scale") != 2.5 {
			t.Fatalf("launch %d: eps %g, scale %g", launch, p1.F32("eps"), p2.F32("scale"))
		}
	}
	if len(e.norm) != 2 {
		t.Errorf("the entry holds %d normalized params, want 2", len(e.norm))
	}
}
