package infile

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// MemAvailable is MemAvailable of /proc/meminfo in bytes: the memory the
// kernel can give this process without swapping; 0 when it is not known
// (not Linux).
func MemAvailable() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// AdmitMemory refuses, before anything is allocated, what needs more host
// memory than is available: MemAvailable, or max (--max-host-memory) when
// it is set and smaller. what names it ("--buf a", "case x"). With max 0
// and MemAvailable unknown nothing is refused. The error is an *Error
// (exit 2) with both figures.
func AdmitMemory(what string, need, max uint64) error {
	budget, by := MemoryBudget(max)
	return AdmitBudget(what, need, budget, by)
}

// MemoryBudget is the host memory a command may use now: MemAvailable, or
// max (--max-host-memory) when it is set and smaller; by says which, for
// AdmitBudget's error. 0 when neither is known.
func MemoryBudget(max uint64) (budget uint64, by string) {
	budget, by = MemAvailable(), "available"
	if max > 0 && (budget == 0 || max < budget) {
		budget, by = max, "allowed by --max-host-memory"
	}
	return budget, by
}

// AdmitBudget is AdmitMemory against a budget taken earlier
// (MemoryBudget): an *Error when need is over it, nil when it fits or the
// budget is 0 (unknown).
func AdmitBudget(what string, need, budget uint64, by string) error {
	if budget == 0 || need <= budget {
		return nil
	}
	return Errorf("%s needs about %s of host memory, %s is %s", what, SizeText(need), SizeText(budget), by)
}

// ParseSize reads a byte count: decimal or 0x hex, with an optional K, M,
// G or T suffix (KiB, MiB, GiB, TiB; also written KiB ...). It must be
// above 0 and at most max.
func ParseSize(s string, max uint64) (uint64, error) {
	mult := uint64(1)
	t := s
	for _, u := range []struct {
		suf  []string
		mult uint64
	}{{[]string{"KiB", "K", "k"}, 1 << 10}, {[]string{"MiB", "M"}, 1 << 20}, {[]string{"GiB", "G"}, 1 << 30}, {[]string{"TiB", "T"}, 1 << 40}} {
		for _, suf := range u.suf {
			if strings.HasSuffix(t, suf) && !strings.HasPrefix(t, "0x") {
				t, mult = strings.TrimSuffix(t, suf), u.mult
				break
			}
		}
		if mult > 1 {
			break
		}
	}
	n, err := strconv.ParseUint(t, 0, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("invalid size %q (want bytes > 0, e.g. 4096, 0x1000, 64K, 1M)", s)
	}
	if n > max/mult {
		return 0, fmt.Errorf("size %q is over the %s limit", s, SizeText(max))
	}
	return n * mult, nil
}
