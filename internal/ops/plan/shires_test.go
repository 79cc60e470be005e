package plan

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

func TestNeedsAllShires(t *testing.T) {
	for k, want := range map[string]bool{
		"mul_mat_f32_matrix_engine": true, "mul_mat_Q4_0_matrix_engine": true, "conv_2d_f32_me": true,
		"flash_attn_ext_f16_me": true, "mul_mat_f32": false, "rms_norm_f32": false, "uberkernel": false, "memops": false,
	} {
		if got := NeedsAllShires(k); got != want {
			t.Errorf("NeedsAllShires(%s) = %v", k, got)
		}
	}
}

func TestCheckShireMask(t *testing.T) {
	for _, m := range []uint32{1, 0x3, 0xF0, 0x80000000, 0xFFFF0000, FullShireMask} {
		if err := CheckShireMask(m); err != nil {
			t.Errorf("%#x: %v", m, err)
		}
	}
	for m, want := range map[uint32]string{0: "selects no compute shire", 0x5: "not contiguous", 0x80000001: "not contiguous", 0xF0F: "not contiguous"} {
		if err := CheckShireMask(m); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%#x: %v, want %q", m, err, want)
		}
	}
}

func TestShireMaskPlan(t *testing.T) {
	// A matrix-engine mul_mat and a plain rms_norm planned with mask 0x1:
	// the rms_norm launches on shire 0, the mul_mat keeps all 32 shires
	// and says why, and an uberkernel segment holding both uses the union.
	g := newGB(t).leaf("x", ops.F32, 256, 7).leaf("w", ops.F32, 256, 64).
		node("n", "rms_norm", []string{"x"}, map[string]any{"eps": 1e-5}).
		node("mm", "mul_mat", []string{"w", "n"}, nil).outputs("mm").g
	for _, uber := range []bool{false, true} {
		p, err := Build(g, nil, Options{ShireMask: 0x1, Uberkernel: uber})
		if err != nil {
			t.Fatal(err)
		}
		var masks []uint32
		me := 0
		for _, s := range p.Steps {
			if s.Kind != StepLaunch {
				continue
			}
			masks = append(masks, s.ShireMask)
			if NeedsAllShires(s.Kernel) {
				me++
				if s.ShireMask != FullShireMask || !strings.Contains(s.MaskNote, "needs all 32 shires") {
					t.Errorf("%s: mask %#x note %q", s.Kernel, s.ShireMask, s.MaskNote)
				}
			} else if s.ShireMask != 0x1 || s.MaskNote != "" {
				t.Errorf("%s: mask %#x note %q", s.Kernel, s.ShireMask, s.MaskNote)
			}
		}
		if len(masks) != 2 || me != 1 {
			t.Fatalf("launch masks %v (kernels must include a matrix-engine mul_mat)", masks)
		}
		for _, seg := range p.Segments() {
			want := uint32(0)
			for _, si := range seg {
				want |= p.Steps[si].ShireMask
			}
			if got := p.SegmentMask(seg); got != want {
				t.Errorf("segment %v mask %#x, want %#x", seg, got, want)
			}
		}
	}
	p, err := Build(g, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.ShireMask != FullShireMask {
		t.Errorf("default mask %#x", p.ShireMask)
	}
	for _, s := range p.Steps {
		if s.Kind == StepLaunch && (s.ShireMask != FullShireMask || s.MaskNote != "") {
			t.Errorf("default plan: %s mask %#x note %q", s.Kernel, s.ShireMask, s.MaskNote)
		}
	}
}
