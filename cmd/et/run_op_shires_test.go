package main

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

// maskDevice records the shire mask of every launch.
type maskDevice struct {
	driver.Device
	mu    *sync.Mutex
	masks *[]uint64
}

func (d maskDevice) Launch(ctx context.Context, k driver.KernelID, args []byte, o driver.LaunchOptions) error {
	d.mu.Lock()
	*d.masks = append(*d.masks, o.ShireMask)
	d.mu.Unlock()
	return d.Device.Launch(ctx, k, args, o)
}

func TestRunOpShireMask(t *testing.T) {
	run := func(t *testing.T, mask string) []uint64 {
		t.Helper()
		var mu sync.Mutex
		var masks []uint64
		f, out, errOut := testFactory(nil)
		root := newRootCmd(f)
		replaceCmd(root, newRunOpCmd(f, func(ctx context.Context, o *runOpOptions) error {
			o.OpenDevice = openWrapped(func(d driver.Device) driver.Device { return maskDevice{d, &mu, &masks} })
			return runOpRun(ctx, f, o)
		}))
		args := []string{"run-op", "-f", "../../testcases/mul_mat.yaml"}
		if mask != "" {
			args = append(args, "--shire-mask", mask)
		}
		if code := executeRoot(context.Background(), f, root, args); code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		return masks
	}
	// testcases/mul_mat.yaml launches three matrix-engine kernels
	// (f32_me, f16_me, q4_0_me) and four others.
	count := func(masks []uint64, m uint64) int {
		n := 0
		for _, v := range masks {
			if v == m {
				n++
			}
		}
		return n
	}
	if m := run(t, ""); len(m) != 7 || count(m, 0xFFFFFFFF) != 7 {
		t.Errorf("default masks %x, want 7 launches with the full mask", m)
	}
	if m := run(t, "0x1"); len(m) != 7 || count(m, 0x1) != 4 || count(m, 0xFFFFFFFF) != 3 {
		t.Errorf("--shire-mask 0x1: masks %x, want 4 launches on shire 0 and the 3 matrix-engine ones on all 32", m)
	}
	for mask, want := range map[string]string{"0": "selects no compute shire", "0x5": "not contiguous", "0x1FFFFFFFF": "want a 32-bit", "x": "want a 32-bit"} {
		code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/mul_mat.yaml", "--shire-mask", mask)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("--shire-mask %s: exit %d, %q", mask, code, errOut)
		}
	}
	code, out, _ := runCLI(t, nil, "run-op", "-f", "../../testcases/mul_mat.yaml", "--shire-mask", "0x1", "--explain")
	if code != 0 || strings.Count(out, "shire mask 0x1 refused") != 3 {
		t.Errorf("explain: exit %d\n%s", code, out)
	}
}
