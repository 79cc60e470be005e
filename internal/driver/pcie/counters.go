package pcie

import (
	"fmt"
	"strconv"
	"strings"
)

// Counter is one value from the ET driver's statistics attributes
// (err_stats, mem_stats, ops_vq_stats), converted to base units.
type Counter struct {
	// File is the attribute, relative to the PCI device ("err_stats/ce_count").
	File string `json:"file"`
	// Name is the line's label ("DramCeEvent", "SQ0"); empty for a file
	// holding a single value.
	Name string `json:"name,omitempty"`
	// Value is in Unit.
	Value uint64 `json:"value"`
	// Unit is count, bytes, bytes_per_s, msgs, msgs_per_s or percent.
	Unit string `json:"unit"`
}

// CounterGroups are the sysfs groups whose files are read as counters, in
// report order.
var CounterGroups = []string{"err_stats", "mem_stats", "ops_vq_stats"}

// counterUnits maps the driver's unit suffixes to et's unit and the
// multiplier to base units (the driver's MB is SZ_1M).
var counterUnits = map[string]struct {
	unit string
	mul  uint64
}{
	"":           {"count", 1},
	"B":          {"bytes", 1},
	"MB":         {"bytes", 1 << 20},
	"B/sec":      {"bytes_per_s", 1},
	"MB/sec":     {"bytes_per_s", 1 << 20},
	"msg(s)":     {"msgs", 1},
	"msg(s)/sec": {"msgs_per_s", 1},
	"%":          {"percent", 1},
}

// CounterError is a line of a statistics attribute that et cannot read.
type CounterError struct {
	File string
	Line int
	Msg  string
}

func (e *CounterError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// ParseCounters parses the text of one statistics attribute: either a
// single "<value>[ <unit>]" or lines of "<name>: <value>[ <unit>]". Blank
// lines are skipped; anything else is a *CounterError naming the line.
func ParseCounters(file, text string) ([]Counter, error) {
	var out []Counter
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var name string
		if k, v, ok := strings.Cut(line, ":"); ok {
			name = strings.TrimSpace(k)
			line = strings.TrimSpace(v)
			if name == "" || strings.ContainsAny(name, " \t") {
				return nil, &CounterError{file, i + 1, fmt.Sprintf("bad counter name %q", name)}
			}
		}
		num, unit, _ := strings.Cut(line, " ")
		unit = strings.TrimSpace(unit)
		v, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return nil, &CounterError{file, i + 1, fmt.Sprintf("bad counter value %q", num)}
		}
		u, ok := counterUnits[unit]
		if !ok {
			return nil, &CounterError{file, i + 1, fmt.Sprintf("unknown unit %q", unit)}
		}
		if u.mul > 1 && v > ^uint64(0)/u.mul {
			return nil, &CounterError{file, i + 1, fmt.Sprintf("counter value %d %s overflows", v, unit)}
		}
		out = append(out, Counter{File: file, Name: name, Value: v * u.mul, Unit: u.unit})
	}
	return out, nil
}
