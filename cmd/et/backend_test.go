package main

import (
	"slices"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

func TestInterruptedMsg(t *testing.T) {
	for in, want := range map[string]string{
		"rms_norm: exec: context canceled":                     "rms_norm: exec: interrupted",
		"etrt worker: interrupted during sync; worker stopped": "etrt worker: interrupted during sync; worker stopped",
		"read x.bin: bad file":                                 "read x.bin: bad file (interrupted)",
	} {
		if got := interruptedMsg(in); got != want {
			t.Errorf("interruptedMsg(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHartList(t *testing.T) {
	seq := func(lo, hi, step uint32) []uint32 {
		var hs []uint32
		for h := lo; h <= hi; h += step {
			hs = append(hs, h)
		}
		return hs
	}
	for _, tt := range []struct {
		harts []uint32
		want  string
	}{
		{[]uint32{5}, "5"},
		{seq(0, 2047, 1), "0-2047"},
		{seq(0, 62, 2), "0-62 step 2"},
		{[]uint32{12, 3, 7, 9, 10, 11, 3}, "3, 7, 9-12"},
		{[]uint32{1, 3}, "1, 3"},
		{[]uint32{0, 2, 3, 5, 7, 8, 10, 20, 21, 30}, "0, 2-3, 5, ..., 20-21, 30"},
	} {
		if got := hartList(tt.harts); got != tt.want {
			t.Errorf("hartList(%v) = %q, want %q", tt.harts, got, tt.want)
		}
	}
}

// A kernel error's 2048 contexts are one row, its unfilled registers "-";
// distinct faults stay apart, and groups beyond the limit are counted.
func TestStreamErrorRows(t *testing.T) {
	var kernelErr []driver.ErrorContext
	for h := uint32(0); h < 2048; h++ {
		kernelErr = append(kernelErr, driver.ErrorContext{Hart: h, Detail: "kernel execution error (user error -10)",
			Kind: "kernel execution error", UserError: -10, HasUserError: true, Unfilled: "cause,epc,tval"})
	}
	exc := []driver.ErrorContext{
		{Hart: 0, Cause: 7, EPC: 0x8005b36016, Detail: "U-mode exception: store/AMO access fault"},
		{Hart: 1, Cause: 7, EPC: 0x8005b36016, Detail: "U-mode exception: store/AMO access fault"},
		{Hart: 2, Cause: 5, EPC: 0x8005b36020, TVal: 0x40, Detail: "U-mode exception: load access fault"},
	}
	rows, notes := streamErrorRows([]string{"c"}, []driver.StreamError{
		{Code: "KernelLaunchUnexpectedError", Message: "2048 hart(s)", Contexts: kernelErr},
		{Code: "KernelLaunchException", Contexts: exc},
		{Code: "DmaInvalidAddress"},
	}, 1)
	want := [][]string{
		{"c", "KernelLaunchUnexpectedError", "2048", "0-2047", "-", "-", "-", "kernel execution error (user error -10)"},
		{"c", "KernelLaunchException", "2", "0-1", "7", "0x8005b36016", "0x0", "U-mode exception: store/AMO access fault"},
		{"c", "DmaInvalidAddress", "-", "-", "-", "-", "-", "-"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %q", rows)
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d = %q, want %q", i, rows[i], want[i])
		}
		if len(rows[i]) != 1+len(streamErrorHeaders) {
			t.Errorf("row %d has %d cells, headers %d", i, len(rows[i]), len(streamErrorHeaders))
		}
	}
	wantNotes := []string{"KernelLaunchUnexpectedError: 2048 hart(s)", "KernelLaunchException: 1 more group(s) of 1 hart context(s) in -o json"}
	if !slices.Equal(notes, wantNotes) {
		t.Errorf("notes %q, want %q", notes, wantNotes)
	}
}
