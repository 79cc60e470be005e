package main

import (
	"strconv"

	"github.com/ainekko/et/internal/infile"
)

// Formatting helpers for tables (JSON keeps raw values).

// fmtNS scales nanoseconds for tables: "950 ns", "18.6 µs", "1.73 ms".
func fmtNS(ns int64) string {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	var s string
	switch {
	case ns < 1000:
		s = strconv.FormatInt(ns, 10) + " ns"
	case ns < 1000000:
		s = strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) + " µs"
	case ns < 1000000000:
		s = strconv.FormatFloat(float64(ns)/1e6, 'f', 2, 64) + " ms"
	default:
		s = strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) + " s"
	}
	if neg {
		return "-" + s
	}
	return s
}

// fmtBytes scales a size with binary units: "512 B", "64 KiB" (exact
// multiples without a decimal), "1.5 GiB" (infile's messages write sizes
// the same way).
func fmtBytes(b uint64) string { return infile.SizeText(b) }

func fmtBW(bps float64) string {
	if bps <= 0 {
		return "-"
	}
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'f', 2, 64) + " GB/s"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'f', 1, 64) + " MB/s"
	}
	return strconv.FormatFloat(bps/1e3, 'f', 1, 64) + " kB/s"
}

func fmtPct(p float64) string {
	if p < 0 {
		return "-"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

func fmtCycles(c uint64) string {
	return strconv.FormatUint(c, 10)
}

// nsOrDash is fmtNS, or "-" for an unknown (negative) time.
func nsOrDash(ns int64) string {
	if ns < 0 {
		return "-"
	}
	return fmtNS(ns)
}
