package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/infile"
)

// ShardFile is one shard's report (et run-op --shard I/N -o json) and the
// file it came from.
type ShardFile struct {
	File   string
	Report *Report
}

// MergeError is a shard file that cannot be merged: not a shard report,
// from another run, a shard twice or missing. Bad input (exit 2).
type MergeError struct {
	File string // "" when no one file is at fault (a missing shard)
	Msg  string
}

func (e *MergeError) Error() string {
	if e.File == "" {
		return "merge: " + e.Msg
	}
	return e.File + ": " + e.Msg
}

// InputError marks a merge error as bad input (exit 2).
func (e *MergeError) InputError() {}

// DecodeShard reads one shard file's JSON (a report of et run-op --shard
// with -o json).
func DecodeShard(file string, b []byte) (ShardFile, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return ShardFile{}, &MergeError{file, "empty: no report (did the shard's run stop before printing one?)"}
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		msg := "not JSON: " + err.Error()
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			msg = fmt.Sprintf("not JSON at byte %d: %v", se.Offset, err)
		case errors.As(err, &te):
			msg = fmt.Sprintf("field %s at byte %d: %v", te.Field, te.Offset, err)
		}
		return ShardFile{}, &MergeError{file, msg + " (want the -o json report of et run-op --shard I/N)"}
	}
	if dec.More() {
		return ShardFile{}, &MergeError{file, "more than one JSON document"}
	}
	if r.Schema != ReportSchema {
		return ShardFile{}, &MergeError{file, fmt.Sprintf("schema %q, want %q (the -o json report of et run-op --shard I/N)", r.Schema, ReportSchema)}
	}
	if r.Shard == nil {
		return ShardFile{}, &MergeError{file, "not a shard: the report has no \"shard\" (run et run-op with --shard I/N)"}
	}
	return ShardFile{File: file, Report: &r}, nil
}

// MergeFiles reads the shard reports files (-o json of et run-op --shard
// I/N, each read with a bound: infile) and merges them (Merge). A file
// that cannot be read is an input error naming it.
func MergeFiles(ctx context.Context, files []string) (merged *Report, shards int, errs []string, err error) {
	var sfs []ShardFile
	for _, file := range files {
		b, err := infile.ReadFile(ctx, file, infile.MaxText)
		if err != nil {
			if ctx.Err() != nil {
				return nil, 0, nil, ctx.Err()
			}
			return nil, 0, nil, infile.Errorf("%s: cannot read: %s", file, infile.ErrText(err))
		}
		sf, err := DecodeShard(file, b)
		if err != nil {
			return nil, 0, nil, err
		}
		sfs = append(sfs, sf)
	}
	merged, errs, err = Merge(sfs)
	return merged, len(sfs), errs, err
}

// Merge joins the reports of every shard of one run into the report one
// unsharded run of the same cases gives: the same schema, the cases in the
// unsharded order, ABI checks summed, no shard key. errs are the cases
// that could not be run, each once (a file no shard could read is in
// every shard's list). The shards must be all of 1..N of one run (the
// same cases, backend and numerics), each once; anything else is a
// *MergeError naming the file.
func Merge(shards []ShardFile) (merged *Report, errs []string, err error) {
	if len(shards) == 0 {
		return nil, nil, &MergeError{Msg: "no shard files"}
	}
	first := shards[0]
	fi := first.Report.Shard
	byIndex := map[int]string{}
	type span struct {
		sc    ShardCase
		r     *Report
		start [5]int // offsets into the report's results, perf, faults, abi_mismatches, launches
	}
	cases := map[int]*span{} // by index in the unsharded run
	for _, sf := range shards {
		r, si := sf.Report, sf.Report.Shard
		switch {
		case si.Count != fi.Count:
			return nil, nil, &MergeError{sf.File, fmt.Sprintf("shard %d/%d, but %s is a shard of %d: not the same split", si.Index, si.Count, first.File, fi.Count)}
		case si.CasesTotal != fi.CasesTotal || si.CasesDigest != fi.CasesDigest:
			return nil, nil, &MergeError{sf.File, fmt.Sprintf("from another run than %s: its %d cases are not the same (cases_digest %s, %s has %s)",
				first.File, si.CasesTotal, shortDigest(si.CasesDigest), first.File, shortDigest(fi.CasesDigest))}
		case r.Backend != first.Report.Backend:
			return nil, nil, &MergeError{sf.File, fmt.Sprintf("backend %s, but %s ran on %s", r.Backend, first.File, first.Report.Backend)}
		case r.Numerics != first.Report.Numerics:
			return nil, nil, &MergeError{sf.File, fmt.Sprintf("numerics %s, but %s has %s", r.Numerics, first.File, first.Report.Numerics)}
		case si.Index < 1 || si.Index > si.Count:
			return nil, nil, &MergeError{sf.File, fmt.Sprintf("shard index %d is not 1 to %d", si.Index, si.Count)}
		}
		if other, dup := byIndex[si.Index]; dup {
			return nil, nil, &MergeError{sf.File, fmt.Sprintf("shard %d/%d again (also %s)", si.Index, si.Count, other)}
		}
		byIndex[si.Index] = sf.File
		var at [5]int
		for _, sc := range si.Cases {
			if sc.Index < 0 || sc.Index >= si.CasesTotal {
				return nil, nil, &MergeError{sf.File, fmt.Sprintf("case %q has index %d, not 0 to %d", sc.Name, sc.Index, si.CasesTotal-1)}
			}
			if sc.Results < 0 || sc.Perf < 0 || sc.Faults < 0 || sc.ABIMismatches < 0 || sc.Launches < 0 ||
				sc.Results > len(r.Results) || sc.Perf > len(r.Perf) || sc.Faults > len(r.Faults) || sc.ABIMismatches > len(r.ABIMismatches) ||
				sc.Launches > len(r.Launches) {
				return nil, nil, &MergeError{sf.File, fmt.Sprintf("case %q: counts out of range (the report has %d results, %d perf, %d faults, %d abi_mismatches)", sc.Name, len(r.Results), len(r.Perf), len(r.Faults), len(r.ABIMismatches))}
			}
			if _, dup := cases[sc.Index]; dup {
				return nil, nil, &MergeError{sf.File, fmt.Sprintf("case %d (%s) is in this shard and in another one: not the same split", sc.Index, sc.Name)}
			}
			cases[sc.Index] = &span{sc: sc, r: r, start: at}
			at[0] += sc.Results
			at[1] += sc.Perf
			at[2] += sc.Faults
			at[3] += sc.ABIMismatches
			at[4] += sc.Launches
		}
		have := [5]int{len(r.Results), len(r.Perf), len(r.Faults), len(r.ABIMismatches), len(r.Launches)}
		for k, what := range []string{"results", "perf", "faults", "abi_mismatches", "launches"} {
			if at[k] != have[k] {
				return nil, nil, &MergeError{sf.File, fmt.Sprintf("its shard.cases account for %d %s, the report has %d", at[k], what, have[k])}
			}
		}
		for i, sc := range si.Cases {
			cs := r.caseNames(cases[sc.Index].start, sc)
			for _, n := range cs {
				if n != sc.Name {
					return nil, nil, &MergeError{sf.File, fmt.Sprintf("shard.cases[%d] is %q, but its entries are of case %q", i, sc.Name, n)}
				}
			}
		}
	}
	if len(byIndex) != fi.Count {
		var missing []string
		for i := 1; i <= fi.Count; i++ {
			if _, ok := byIndex[i]; !ok {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		return nil, nil, &MergeError{Msg: fmt.Sprintf("missing shard(s) %s of %d: have %d of %d files", strings.Join(missing, ", "), fi.Count, len(byIndex), fi.Count)}
	}
	if len(cases) != fi.CasesTotal {
		return nil, nil, &MergeError{Msg: fmt.Sprintf("the shards list %d cases, their cases_total is %d", len(cases), fi.CasesTotal)}
	}

	m := &Report{Schema: ReportSchema, Backend: first.Report.Backend, Numerics: first.Report.Numerics, Results: []Result{}}
	var devices []string
	seen := map[string]bool{}
	for i := 1; i <= fi.Count; i++ {
		for _, sf := range shards {
			if sf.Report.Shard.Index != i {
				continue
			}
			if d := sf.Report.Device; !slices.Contains(devices, d) {
				devices = append(devices, d)
			}
			m.ABIChecked += sf.Report.ABIChecked
			if ph := sf.Report.Phases; ph != nil {
				if m.Phases == nil {
					m.Phases = &Phases{}
				}
				m.Phases.plus(*ph)
				m.Phases.OtherNS += ph.OtherNS
				m.Phases.TotalNS += ph.TotalNS
			}
			for _, e := range sf.Report.Shard.Errors {
				if !seen[e] {
					seen[e] = true
					errs = append(errs, e)
				}
			}
		}
	}
	m.Device = strings.Join(devices, ", ")
	for i := range fi.CasesTotal {
		c := cases[i]
		r, s, sc := c.r, c.start, c.sc
		m.Results = append(m.Results, r.Results[s[0]:s[0]+sc.Results]...)
		m.Perf = append(m.Perf, r.Perf[s[1]:s[1]+sc.Perf]...)
		m.Faults = append(m.Faults, r.Faults[s[2]:s[2]+sc.Faults]...)
		m.ABIMismatches = append(m.ABIMismatches, r.ABIMismatches[s[3]:s[3]+sc.ABIMismatches]...)
		m.Launches = append(m.Launches, r.Launches[s[4]:s[4]+sc.Launches]...)
	}
	return m, errs, nil
}

// caseNames are the case names of the entries a shard case accounts for.
func (r *Report) caseNames(start [5]int, sc ShardCase) []string {
	var names []string
	for _, x := range r.Results[start[0] : start[0]+sc.Results] {
		names = append(names, x.Case)
	}
	for _, x := range r.Perf[start[1] : start[1]+sc.Perf] {
		names = append(names, x.Case)
	}
	for _, x := range r.Faults[start[2] : start[2]+sc.Faults] {
		names = append(names, x.Case)
	}
	for _, x := range r.ABIMismatches[start[3] : start[3]+sc.ABIMismatches] {
		names = append(names, x.Case)
	}
	for _, x := range r.Launches[start[4] : start[4]+sc.Launches] {
		names = append(names, x.Case)
	}
	return names
}

func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}
