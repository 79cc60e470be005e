package main

import (
	"math"
	"strconv"

	"github.com/ainekko/et/internal/infile"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/runner"
)

// seedFlag is --seed: parsed by runner.ParseSeed, so that it accepts
// exactly what a case file's seed: accepts (0x2a, 0o52, 42; not -1, 1.5
// or 2^64).
type seedFlag struct{ v *uint64 }

func (s seedFlag) String() string {
	if s.v == nil {
		return "0"
	}
	return strconv.FormatUint(*s.v, 10)
}

func (s seedFlag) Set(text string) error {
	v, err := runner.ParseSeed(text)
	if err != nil {
		return err
	}
	*s.v = v
	return nil
}

func (seedFlag) Type() string { return "uint64" }

// sizeFlag is a byte count flag (--max-host-memory): bytes, or with a K,
// M, G or T suffix (KiB ... TiB), parsed by infile.ParseSize.
type sizeFlag struct{ v *uint64 }

func (s sizeFlag) String() string {
	if s.v == nil || *s.v == 0 {
		return ""
	}
	return infile.SizeText(*s.v)
}

func (s sizeFlag) Set(text string) error {
	v, err := infile.ParseSize(text, math.MaxUint64)
	if err != nil {
		return err
	}
	*s.v = v
	return nil
}

func (sizeFlag) Type() string { return "size" }

// checkNMSELimit validates --nmse: a limit must be a positive, finite
// number (NaN would pass every output, a negative limit fail them all).
func checkNMSELimit(v float64) error {
	if !(v > 0) || math.IsInf(v, 0) {
		return usageErrorf("--nmse: want a positive number such as 5e-4, got %v", v)
	}
	return nil
}

// nmseCell is a result's nmse in the table: a NaN or an infinity that
// failed the output is shown as such, not as the 0 or MaxFloat64 JSON
// carries.
func nmseCell(r runner.Result) string { return errorCell(r.Failure, float64(r.NMSE)) }

// driftCell is a result's drift in the table, as nmseCell shows the NMSE.
func driftCell(r runner.Result) string { return errorCell(r.DriftFailure, float64(r.DriftNMSE)) }

func errorCell(failure string, nmse float64) string {
	switch failure {
	case ops.FailNaN:
		return "NaN"
	case ops.FailInfMismatch, ops.FailInfSign:
		return "inf"
	}
	return strconv.FormatFloat(nmse, 'e', 2, 64)
}

// maxAbsCell is a result's max abs error in the table: NaN when the
// output holds one (the error is then not measured).
func maxAbsCell(r runner.Result) string {
	if r.Failure == ops.FailNaN {
		return "NaN"
	}
	return strconv.FormatFloat(float64(r.MaxAbsErr), 'e', 2, 64)
}
