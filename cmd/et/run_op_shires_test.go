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
	run := func(t *testing.T, mask string, extra ...string) []uint64 {
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
		args = append(args, extra...)
		if code := executeRoot(context.Background(), f, root, args); code != 0 {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		return masks
	}
	// testcases/mul_mat.yaml launches three matrix-engine kernels
	// (f32_me, f16_me, q4_0_me), mul_mat_Q8_0 and mul_mat_Q4_0 (they
	// stride rows by absolute hart id) and two that split by the mask.
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
	if m := run(t, "0x1"); len(m) != 7 || count(m, 0x1) != 2 || count(m, 0xFFFFFFFF) != 5 {
		t.Errorf("--shire-mask 0x1: masks %x, want 2 launches on shire 0 and the 5 that need all shires on all 32", m)
	}
	if m := run(t, "0x1", "--force-shire-mask"); len(m) != 7 || count(m, 0x1) != 7 {
		t.Errorf("--shire-mask 0x1 --force-shire-mask: masks %x, want all 7 on shire 0", m)
	}
	if m := run(t, "0x1", "--uberkernel"); count(m, 0x1) != 0 {
		t.Errorf("--shire-mask 0x1 --uberkernel: masks %x, want none on shire 0 (the uberkernel waits for all 32 shires)", m)
	}
	if code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/mul_mat.yaml", "--force-shire-mask"); code != 2 || !strings.Contains(errOut, "--force-shire-mask needs --shire-mask") {
		t.Errorf("--force-shire-mask alone: exit %d, %q", code, errOut)
	}
	for mask, want := range map[string]string{"0": "selects no compute shire", "0x5": "not contiguous", "0x1FFFFFFFF": "want a 32-bit", "x": "want a 32-bit"} {
		code, _, errOut := runCLI(t, nil, "run-op", "-f", "../../testcases/mul_mat.yaml", "--shire-mask", mask)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("--shire-mask %s: exit %d, %q", mask, code, errOut)
		}
	}
	code, out, _ := runCLI(t, nil, "run-op", "-f", "../../testcases/mul_mat.yaml", "--shire-mask", "0x1", "--explain")
	if code != 0 || strings.Count(out, "shire mask 0x1 refused") != 5 || strings.Count(out, "splits its rows by absolute hart id") != 2 {
		t.Errorf("explain: exit %d\n%s", code, out)
	}
}
