package main

import (
	"encoding"
	"encoding/csv"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/kernelrun"
	"github.com/ainekko/et/internal/runner"
)

// The raw CSV form of a command (-o csv) is built from its typed document,
// never from the display tables, by the rules docs/output-formats.md
// states:
//
//   - A table's rows are a slice of structs; its columns are the JSON keys
//     of the structs' fields, in field order. The keys of a nested struct
//     are prefixed with its own key and "_" (properties_memory_bytes); an
//     embedded struct's keys are not, as in JSON.
//   - Values are raw, in the units their names say: integers in decimal,
//     floats in Go's shortest 'g' form (1e-07), booleans true or false,
//     text as it is (no colour, no scaling, no decoration).
//   - A cell is empty when the JSON form omits the key (a nil pointer or an
//     omitempty zero: unknown or not applicable). Booleans are always
//     true or false.
//   - A list of scalars is one cell, its items joined with ';'. A list of
//     structs is a table of its own whose rows carry their parent's key
//     columns; maps are left to JSON.
//   - A command with one kind of table writes plain CSV (a header, then
//     rows). A command with several writes each as a section: a record of
//     one field, "# <table>", then the header and rows; sections are
//     separated by an empty line and always appear in the same order (a
//     table without rows still has its header). Every table has at least
//     two columns, so a one-field record is always a section line.

// csvTable is one table of a command's raw CSV form.
type csvTable struct {
	// Name is the table's name ("" for the only table of a plain CSV).
	Name string
	// Rows is a slice of structs (typed even when empty: its element type
	// gives the header).
	Rows any
}

// csvListSep joins the items of a list in one cell.
const csvListSep = ";"

// csvTablesOf returns the raw CSV tables of a command's document.
func csvTablesOf(data any) ([]csvTable, error) {
	if f, ok := data.(interface{ csvTables() []csvTable }); ok {
		return f.csvTables(), nil
	}
	switch d := data.(type) {
	case devicesDoc:
		return devicesCSV(d), nil
	case checkSysemuDoc:
		return checkSysemuCSV(d), nil
	case opsListDoc:
		return opsListCSV(d), nil
	case opsExplainDoc:
		return opsExplainCSV(d), nil
	case profileReportDoc:
		return profileReportCSV(d), nil
	case profileDiffDoc:
		return profileDiffCSV(d), nil
	case profileExportDoc:
		return profileExportCSV(d), nil
	case kernelrun.Report:
		return runKernelCSV(d), nil
	case runner.Report:
		return runOpCSV(d), nil
	case *runner.Report:
		return runOpCSV(*d), nil
	}
	return nil, fmt.Errorf("internal error: no CSV form for %T", data)
}

// writeRawCSV writes the raw CSV form of data.
func writeRawCSV(w io.Writer, data any) error {
	tables, err := csvTablesOf(data)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	sections := len(tables) != 1 || tables[0].Name != ""
	for i, t := range tables {
		header, rows, err := csvRecords(t.Rows)
		if err != nil {
			return fmt.Errorf("csv table %q: %w", t.Name, err)
		}
		if sections {
			if i > 0 {
				// encoding/csv writes no empty record: end the line by hand.
				cw.Flush()
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			cw.Write([]string{"# " + t.Name})
		}
		cw.Write(header)
		for _, r := range rows {
			cw.Write(r)
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvColumn is one column of a table: the path of struct fields (through
// embedded and nested structs) to its value.
type csvColumn struct {
	name      string
	index     []int
	omitEmpty bool
}

// csvColumns lists the columns of a row type.
func csvColumns(t reflect.Type) ([]csvColumn, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("rows of %s, want structs", t)
	}
	var cols []csvColumn
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			idx := append(append([]int(nil), index...), i)
			isStruct := ft.Kind() == reflect.Struct && !csvScalarType(ft)
			if sf.Anonymous && name == "" && isStruct {
				walk(ft, prefix, idx)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			switch {
			case isStruct:
				walk(ft, prefix+name+"_", idx)
				continue
			case ft.Kind() == reflect.Map:
				continue
			case ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array:
				et := ft.Elem()
				for et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if !csvScalarType(et) {
					continue // a table of its own
				}
			}
			cols = append(cols, csvColumn{name: prefix + name, index: idx, omitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
		}
	}
	walk(t, "", nil)
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.name] {
			return nil, fmt.Errorf("two columns named %q in %s", c.name, t)
		}
		seen[c.name] = true
	}
	if len(cols) < 2 {
		return nil, fmt.Errorf("%s has %d column(s), want at least 2", t, len(cols))
	}
	return cols, nil
}

var textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()

// csvScalarType reports whether values of t fill one cell.
func csvScalarType(t reflect.Type) bool {
	if t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// csvRecords returns the header and the rows of a slice of structs.
func csvRecords(rows any) ([]string, [][]string, error) {
	v := reflect.ValueOf(rows)
	if v.Kind() != reflect.Slice {
		return nil, nil, fmt.Errorf("rows are a %T, want a slice", rows)
	}
	cols, err := csvColumns(v.Type().Elem())
	if err != nil {
		return nil, nil, err
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.name
	}
	out := make([][]string, 0, v.Len())
	for i := range v.Len() {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = csvCell(v.Index(i), c)
		}
		out = append(out, row)
	}
	return header, out, nil
}

// csvCell is the cell of column c in row v.
func csvCell(v reflect.Value, c csvColumn) string {
	for _, i := range c.index {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return ""
			}
			v = v.Elem()
		}
		v = v.Field(i)
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return ""
	}
	if c.omitEmpty && v.IsZero() && v.Kind() != reflect.Bool {
		return ""
	}
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		items := make([]string, v.Len())
		for i := range v.Len() {
			items[i] = csvScalar(v.Index(i))
		}
		return strings.Join(items, csvListSep)
	}
	return csvScalar(v)
}

// csvScalar formats one raw value.
func csvScalar(v reflect.Value) string {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, err := m.MarshalText()
		if err != nil {
			return ""
		}
		return string(b)
	}
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32:
		return strconv.FormatFloat(v.Float(), 'g', -1, 32)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// csvFault is one row of a faults table: a stream error and one of its
// hart contexts (none: the context cells are empty).
type csvFault struct {
	Code    string               `json:"code"`
	Message string               `json:"message,omitempty"`
	Context *driver.ErrorContext `json:"context"`
}

// csvFaults lists stream errors one row per hart context.
func csvFaults(errs []driver.StreamError) []csvFault {
	var out []csvFault
	for _, e := range errs {
		if len(e.Contexts) == 0 {
			out = append(out, csvFault{Code: e.Code, Message: e.Message})
		}
		for i := range e.Contexts {
			out = append(out, csvFault{Code: e.Code, Message: e.Message, Context: &e.Contexts[i]})
		}
	}
	return out
}
