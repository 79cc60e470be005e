package runner

import (
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ainekko/et/internal/ops/abi"
	"github.com/ainekko/et/internal/ops/graph"
	"github.com/ainekko/et/internal/ops/plan"
)

// tboRow is one row of test-backend-ops' support CSV.
type tboRow struct {
	op, params string
	supported  bool
}

func readTBOSupport(t *testing.T, path string) []tboRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"backend_name", "op_name", "op_params", "test_mode", "supported", "error_message", "backend_reg_name"}
	if len(recs) < 2 || strings.Join(recs[0], ",") != strings.Join(want, ",") {
		t.Fatalf("%s: header %q, want %q", path, recs[0], want)
	}
	rows := make([]tboRow, 0, len(recs)-1)
	for i, r := range recs[1:] {
		if r[3] != "support" || (r[4] != "0" && r[4] != "1") {
			t.Fatalf("%s: row %d: test_mode %q supported %q", path, i+2, r[3], r[4])
		}
		rows = append(rows, tboRow{op: r[1], params: r[2], supported: r[4] == "1"})
	}
	return rows
}

// TestTBOSupportList feeds every case string of test-backend-ops (ggml
// d99724f2b141, testdata/gen-tbo-support.sh) to the parser, the graph
// builder and the planner, and requires the verdict of the output node to
// be ggml-et's real supports_op verdict for that case.
func TestTBOSupportList(t *testing.T) {
	rows := readTBOSupport(t, "testdata/tbo-support-et0.csv.gz")
	type failure struct {
		n     int
		first []string
	}
	fails := map[string]*failure{}
	fail := func(op, msg string) {
		f := fails[op]
		if f == nil {
			f = &failure{}
			fails[op] = f
		}
		f.n++
		if len(f.first) < 3 {
			f.first = append(f.first, msg)
		}
	}
	// check returns "" when the row's verdict is ggml-et's, else why not.
	m := abi.Default()
	check := func(r tboRow) string {
		s := r.op + "(" + r.params + ")"
		c, err := graph.ParseCaseString(s)
		if err != nil {
			return fmt.Sprintf("parse: %v", err)
		}
		g, err := BuildGraph(c)
		if err != nil {
			return fmt.Sprintf("graph: %v", err)
		}
		p, err := plan.Build(g, m, plan.Options{})
		if err != nil {
			return fmt.Sprintf("plan: %s: %v", s, err)
		}
		out := g.Outputs[len(g.Outputs)-1]
		for i := range g.Nodes {
			if g.Nodes[i].Out != out {
				continue
			}
			if v := p.Verdicts[i]; v.Supported != r.supported {
				return fmt.Sprintf("%s: et says supported=%v %q, ggml-et says %v", s, v.Supported, v.Reasons, r.supported)
			}
			return ""
		}
		return fmt.Sprintf("%s: the output is not a node", s)
	}
	if len(rows) != 19726 {
		t.Fatalf("%d rows, want the 19,726 eval cases of test-backend-ops at d99724f2", len(rows))
	}
	todo := make([]int, len(rows))
	for i := range rows {
		todo[i] = i
	}
	checked := len(todo)
	// Building the graphs allocates every tensor (zeroed): spread the rows
	// over the CPUs; the report does not depend on the order.
	msgs := make([]string, len(rows))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= len(todo) {
					return
				}
				msgs[todo[k]] = check(rows[todo[k]])
			}
		}()
	}
	wg.Wait()
	for i, msg := range msgs {
		if msg != "" {
			fail(rows[i].op, msg)
		}
	}
	t.Logf("%d case strings checked", checked)
	if len(fails) == 0 {
		return
	}
	ops := make([]string, 0, len(fails))
	total := 0
	for op, f := range fails {
		ops = append(ops, op)
		total += f.n
	}
	sort.Slice(ops, func(i, j int) bool {
		if fails[ops[i]].n != fails[ops[j]].n {
			return fails[ops[i]].n > fails[ops[j]].n
		}
		return ops[i] < ops[j]
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d checked case strings fail, in %d ops:\n", total, checked, len(ops))
	for _, op := range ops {
		f := fails[op]
		fmt.Fprintf(&b, "%s: %d\n", op, f.n)
		for _, s := range f.first {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	t.Error(b.String())
}
