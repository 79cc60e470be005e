package plan

import (
	"strings"
	"testing"

	"github.com/ainekko/et/internal/ops"
)

func TestNeedsAllShires(t *testing.T) {
	for k, want := range map[string]bool{
		"mul_mat_f32_matrix_engine": true, "mul_mat_Q4_0_matrix_engine": true, "conv_2d_f32_me": true,
		"flash_attn_ext_f16_me": true, "mul_mat_f32": false, "rms_norm_f32": false, "uberkernel": true, "memops": false,
		// measured on sys_emu with mask 0x2 (docs/run-op-perf.md "Shire masks")
		"mul_mat_Q8_0": true, "mul_mat_Q4_0": true, "rope_f32": true, "mul_mat_id_Q8_0": false, "softmax_f32": false,
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
	// and says why. With the uberkernel the rms_norm runs in a batch, and
	// the uberkernel waits at a barrier across all shires: all 32 too.
	g := newGB(t).leaf("x", ops.F32, 256, 7).leaf("w", ops.F32, 256, 64).
		node("n", "rms_norm", []string{"x"}, map[string]any{"eps": 1e-5}).
		node("mm", "mul_mat", []string{"w", "n"}, nil).outputs("mm").g
	for _, uber := range []bool{false, true} {
		p, err := Build(g, nil, Options{ShireMask: 0x1, Uberkernel: uber})
		if err != nil {
			t.Fatal(err)
		}
		var masks []uint32
		me, batched := 0, 0
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
			} else if uber && s.Batchable {
				batched++
				if s.ShireMask != FullShireMask || !strings.Contains(s.MaskNote, "refused: uberkernel waits at a barrier") {
					t.Errorf("batched %s: mask %#x note %q", s.Kernel, s.ShireMask, s.MaskNote)
				}
			} else if s.ShireMask != 0x1 || s.MaskNote != "" {
				t.Errorf("%s: mask %#x note %q", s.Kernel, s.ShireMask, s.MaskNote)
			}
		}
		if len(masks) != 2 || me != 1 || uber != (batched == 1) {
			t.Fatalf("launch masks %v, %d batched (kernels must include a matrix-engine mul_mat and a batchable rms_norm)", masks, batched)
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

func TestLaunchMaskForced(t *testing.T) {
	for _, k := range []string{"mul_mat_f32_matrix_engine", "mul_mat_Q8_0", "rope_f32"} {
		if m, note := launchMask(k, 0x2, false); m != FullShireMask || !strings.Contains(note, "refused: "+k+" ") || !strings.HasSuffix(note, "launched with 0xffffffff") {
			t.Errorf("%s: %#x %q, want the full mask and why", k, m, note)
		}
		if m, note := launchMask(k, 0x2, true); m != 0x2 || !strings.Contains(note, "shire mask 0x2 forced: "+k+" ") {
			t.Errorf("%s forced: %#x %q", k, m, note)
		}
	}
	for _, force := range []bool{false, true} {
		if m, note := launchMask("rms_norm_f32", 0x2, force); m != 0x2 || note != "" {
			t.Errorf("rms_norm_f32 force=%v: %#x %q", force, m, note)
		}
		if m, note := launchMask("mul_mat_Q8_0", FullShireMask, force); m != FullShireMask || note != "" {
			t.Errorf("mul_mat_Q8_0 full mask force=%v: %#x %q", force, m, note)
		}
	}
}
