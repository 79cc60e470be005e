package runner

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops/graph"
)

// Shard is one part of a run split n ways: Index of Count, from 1.
type Shard struct {
	Index int
	Count int
}

// String is the shard as --shard takes it: "2/4".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardError is a --shard value (or its environment form) that is not
// I/N with 1 <= I <= N: bad input.
type ShardError struct {
	Value string
	Msg   string
}

func (e *ShardError) Error() string { return fmt.Sprintf("shard %q: %s", e.Value, e.Msg) }

// InputError marks a bad shard value as bad input (exit 2).
func (e *ShardError) InputError() {}

// MaxShards bounds the shard count (a typo such as 1/40000000 is refused
// rather than planned).
const MaxShards = 10000

// ParseShard parses "I/N": shard I of N, 1 <= I <= N.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, &ShardError{s, "want I/N, shard I of N counted from 1 (e.g. 1/4)"}
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	switch {
	case err1 != nil || err2 != nil:
		return Shard{}, &ShardError{s, "want I/N with whole numbers (e.g. 1/4)"}
	case n < 1 || n > MaxShards:
		return Shard{}, &ShardError{s, fmt.Sprintf("the shard count must be 1 to %d", MaxShards)}
	case i < 1 || i > n:
		return Shard{}, &ShardError{s, fmt.Sprintf("the shard index must be 1 to %d (shards count from 1)", n)}
	}
	return Shard{Index: i, Count: n}, nil
}

// ShardFromIndex is shard index+1 of count, for a 0-based index such as
// Kubernetes' JOB_COMPLETION_INDEX; what names the values (the
// environment variables) goes into the error.
func ShardFromIndex(index, count, what string) (Shard, error) {
	i, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil || i < 0 {
		return Shard{}, &ShardError{what, fmt.Sprintf("the index %q is not a whole number from 0", index)}
	}
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil || n < 1 || n > MaxShards {
		return Shard{}, &ShardError{what, fmt.Sprintf("the count %q is not a whole number from 1 to %d", count, MaxShards)}
	}
	if i >= n {
		return Shard{}, &ShardError{what, fmt.Sprintf("the index %d is not below the count %d (it counts from 0)", i, n)}
	}
	return Shard{Index: i + 1, Count: n}, nil
}

// CaseKey is a case's identity for sharding: the same on every machine
// and whatever order the files are listed in. A case from a file is its
// file's base name (a directory's files are its *.yaml, so that is the
// path relative to the -f root) with the rest of its name; a case string
// or an op given by flags is its name.
func CaseKey(c *graph.Case) string {
	if c.File == "" || c.File == c.Name || !strings.ContainsAny(c.File, "./") {
		return c.Name
	}
	return filepath.Base(c.File) + "|" + strings.TrimPrefix(c.Name, c.File)
}

// ShardInfo says which part of a sharded run a report is: enough for the
// report to stand alone and for Merge to put the shards back together in
// the order one unsharded run gives.
type ShardInfo struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// CasesTotal counts the cases of all shards (after the filters).
	CasesTotal int `json:"cases_total"`
	// CasesDigest identifies the whole case list (its keys in order):
	// shards of different inputs differ in it.
	CasesDigest string `json:"cases_digest"`
	// Cases are this shard's cases, in run order.
	Cases []ShardCase `json:"cases"`
	// Errors are the cases that could not be run, one line each, as the
	// unsharded run prints them on stderr; files that could not be read
	// or parsed have no case to shard and are in every shard's list.
	Errors []string `json:"errors,omitempty"`
}

// ShardCase is one case of a shard: its position in the unsharded run,
// its key, its name, and how many entries of each of the report's lists
// it gave (none for a case that could not be planned or run).
type ShardCase struct {
	Index         int    `json:"index"`
	Key           string `json:"key"`
	Name          string `json:"name"`
	Results       int    `json:"results"`
	Perf          int    `json:"perf,omitempty"`
	Faults        int    `json:"faults,omitempty"`
	ABIMismatches int    `json:"abi_mismatches,omitempty"`
	Launches      int    `json:"launches,omitempty"`
}

// Span is what one case gave to a run's report: the number of its
// entries in each list (Outcome.Spans, one per planned case).
type Span struct {
	Results, Perf, Faults, ABIMismatches, Launches int
}

func (c caseOutcome) span() Span {
	s := Span{Results: len(c.results), Perf: len(c.perf), Launches: len(c.launches)}
	if c.fault != nil {
		s.Faults = 1
	}
	if c.abi != nil {
		s.ABIMismatches = 1
	}
	return s
}

// shardKeys are the cases' keys, made unique: the second case with the
// same key (two -f directories with the same file name, a line repeated
// in a test file) gets "#2", in input order.
func shardKeys(cases []*graph.Case) []string {
	keys := make([]string, len(cases))
	seen := map[string]int{}
	for i, c := range cases {
		k := CaseKey(c)
		seen[k]++
		if n := seen[k]; n > 1 {
			k += "#" + strconv.Itoa(n)
		}
		keys[i] = k
	}
	return keys
}

func keyHash(k string) uint64 {
	h := sha256.Sum256([]byte(k))
	return binary.BigEndian.Uint64(h[:8])
}

// Select keeps the cases of shard s, in input order, with the report's
// ShardInfo (its Cases without their counts yet: see Fill). The cases are
// ranked by a hash of their keys and dealt out in turn, so the shards'
// sizes differ by at most one and a case's shard depends only on the set
// of cases, not on where files are or the order they are listed in.
func (s Shard) Select(cases []*graph.Case) ([]*graph.Case, *ShardInfo) {
	keys := shardKeys(cases)
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(keyHash(keys[a]), keyHash(keys[b])), strings.Compare(keys[a], keys[b]))
	})
	mine := make([]bool, len(cases))
	for rank, i := range order {
		mine[i] = rank%s.Count == s.Index-1
	}
	d := sha256.New()
	for _, k := range keys {
		d.Write([]byte(k))
		d.Write([]byte{0})
	}
	info := &ShardInfo{Index: s.Index, Count: s.Count, CasesTotal: len(cases),
		CasesDigest: "sha256:" + hex.EncodeToString(d.Sum(nil)), Cases: []ShardCase{}}
	var kept []*graph.Case
	for i, c := range cases {
		if mine[i] {
			kept = append(kept, c)
			info.Cases = append(info.Cases, ShardCase{Index: i, Key: keys[i], Name: c.Name})
		}
	}
	return kept, info
}

// Fill records what each case of the shard gave to the run: planned are
// the shard's cases that could be planned (in order) and spans their
// entries (Outcome.Spans). shardCases are the cases Select kept.
func (info *ShardInfo) Fill(shardCases []*graph.Case, planned []*Planned, spans []Span) {
	at := map[*graph.Case]int{}
	for i, c := range shardCases {
		at[c] = i
	}
	for j, pc := range planned {
		i, ok := at[pc.Case]
		if !ok || j >= len(spans) {
			continue
		}
		sc := &info.Cases[i]
		sp := spans[j]
		sc.Results, sc.Perf, sc.Faults, sc.ABIMismatches, sc.Launches = sp.Results, sp.Perf, sp.Faults, sp.ABIMismatches, sp.Launches
	}
}
