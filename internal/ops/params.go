package ops

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Params holds the parameters of one op node under the names fixed by
// reference/case-format.md §1 (eps, scale, n_dims, mode, ...). Values are
// kept in a small set of Go types after OpInfo.Normalize: float64 for
// floats, int64 for integers, bool, string (enums), []int64 (lists) and
// Type (cpy's destination type). The typed accessors read them back; they
// return the zero value for a missing name, so reference functions are
// called with normalized Params (Normalize fills the defaults).
type Params map[string]any

// ParamKind is the kind of value a parameter takes.
type ParamKind uint8

// The parameter kinds.
const (
	KindFloat ParamKind = iota // float64 (op_params f32)
	KindInt                    // int64 (op_params i32)
	KindBool                   // bool
	KindEnum                   // string from ParamSpec.Enum
	KindInts                   // []int64 of ParamSpec.MinLen..MaxLen entries
	KindType                   // Type, written as a type name (f16, q8_0)
)

func (k ParamKind) String() string {
	switch k {
	case KindFloat:
		return "a number"
	case KindInt:
		return "an integer"
	case KindBool:
		return "true or false"
	case KindEnum:
		return "a name"
	case KindInts:
		return "a list of integers"
	case KindType:
		return "a type name"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParamSpec describes one parameter of an op.
type ParamSpec struct {
	Name     string
	Kind     ParamKind
	Required bool
	// Default is used when the parameter is absent and not Required; it
	// has the normalized Go type of Kind (float64, int64, bool, string,
	// []int64).
	Default any
	// Enum lists the accepted names of a KindEnum parameter.
	Enum []string
	// MinLen and MaxLen bound the length of a KindInts list.
	MinLen, MaxLen int
	// Doc is a one-line description.
	Doc string
}

// F32 returns a float parameter as float32 (op_params hold f32).
func (p Params) F32(name string) float32 {
	switch v := p[name].(type) {
	case float64:
		return float32(v)
	case float32:
		return v
	case int64:
		return float32(v)
	case int:
		return float32(v)
	}
	return 0
}

// Int returns an integer parameter.
func (p Params) Int(name string) int64 {
	switch v := p[name].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	case int32:
		return int64(v)
	case float64:
		return int64(v)
	}
	return 0
}

// Bool returns a boolean parameter.
func (p Params) Bool(name string) bool {
	v, _ := p[name].(bool)
	return v
}

// Str returns an enum (string) parameter.
func (p Params) Str(name string) string {
	v, _ := p[name].(string)
	return v
}

// Ints returns a list parameter.
func (p Params) Ints(name string) []int64 {
	switch v := p[name].(type) {
	case []int64:
		return v
	case []int:
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	return nil
}

// Type returns a type parameter (cpy's destination type).
func (p Params) Type(name string) Type {
	switch v := p[name].(type) {
	case Type:
		return v
	case string:
		t, _ := ParseType(v)
		return t
	}
	return 0
}

// Has reports whether name is set.
func (p Params) Has(name string) bool {
	_, ok := p[name]
	return ok
}

// ParamError is an invalid or unknown parameter of an op node. It is an
// input error (exit code 2).
type ParamError struct {
	Op    Op
	Param string
	Msg   string
}

func (e *ParamError) Error() string {
	if e.Param == "" {
		return fmt.Sprintf("%s: %s", e.Op, e.Msg)
	}
	return fmt.Sprintf("%s: param %s: %s", e.Op, e.Param, e.Msg)
}

// InputError marks ParamError as bad user input.
func (e *ParamError) InputError() {}

// Normalize checks raw parameters (as decoded from YAML, a case string or
// flags: ints, floats, strings, bools, lists) against the op's specs and
// returns them in normalized form with defaults filled in. Unknown names,
// wrong kinds, enum values outside the list and missing required
// parameters are errors naming the parameter.
func (info *OpInfo) Normalize(raw map[string]any) (Params, error) {
	out := make(Params, len(info.Params))
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		spec := info.Param(k)
		if spec == nil {
			return nil, &ParamError{Op: info.Name, Param: k, Msg: "unknown parameter (" + info.paramList() + ")"}
		}
		v, err := NormalizeValue(spec, raw[k])
		if err != nil {
			return nil, &ParamError{Op: info.Name, Param: k, Msg: err.Error()}
		}
		out[k] = v
	}
	for i := range info.Params {
		s := &info.Params[i]
		if _, ok := out[s.Name]; ok {
			continue
		}
		if s.Required {
			return nil, &ParamError{Op: info.Name, Param: s.Name, Msg: "required (" + s.Doc + ")"}
		}
		if s.Default != nil {
			out[s.Name] = s.Default
		}
	}
	return out, nil
}

func (info *OpInfo) Param(name string) *ParamSpec {
	for i := range info.Params {
		if info.Params[i].Name == name {
			return &info.Params[i]
		}
	}
	return nil
}

func (info *OpInfo) paramList() string {
	if len(info.Params) == 0 {
		return "the op takes no parameters"
	}
	names := make([]string, len(info.Params))
	for i, s := range info.Params {
		names[i] = s.Name
	}
	return "want " + strings.Join(names, ", ")
}

func NormalizeValue(s *ParamSpec, v any) (any, error) {
	switch s.Kind {
	case KindFloat:
		if f, ok := asFloat(v); ok {
			return f, nil
		}
	case KindInt:
		if n, ok := asInt(v); ok {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return nil, fmt.Errorf("%d does not fit in an int32", n)
			}
			return n, nil
		}
	case KindBool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case KindEnum:
		if str, ok := v.(string); ok {
			for _, e := range s.Enum {
				if strings.EqualFold(e, str) {
					return e, nil
				}
			}
			return nil, fmt.Errorf("unknown value %q (want %s)", str, strings.Join(s.Enum, ", "))
		}
	case KindType:
		switch t := v.(type) {
		case Type:
			if t.valid() {
				return t, nil
			}
		case string:
			return ParseType(t)
		}
	case KindInts:
		list, ok := asInts(v)
		if !ok {
			break
		}
		if len(list) < s.MinLen || len(list) > s.MaxLen {
			if s.MinLen == s.MaxLen {
				return nil, fmt.Errorf("has %d entries, want %d", len(list), s.MinLen)
			}
			return nil, fmt.Errorf("has %d entries, want %d to %d", len(list), s.MinLen, s.MaxLen)
		}
		return list, nil
	}
	return nil, fmt.Errorf("got %v (%T), want %s", v, v, s.Kind)
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint64:
		return float64(x), true
	}
	return 0, false
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case float32:
		if f := float64(x); f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
	}
	return 0, false
}

func asInts(v any) ([]int64, bool) {
	switch x := v.(type) {
	case []int64:
		return append([]int64(nil), x...), true
	case []int:
		out := make([]int64, len(x))
		for i, n := range x {
			out[i] = int64(n)
		}
		return out, true
	case []any:
		out := make([]int64, len(x))
		for i, e := range x {
			n, ok := asInt(e)
			if !ok {
				return nil, false
			}
			out[i] = n
		}
		return out, true
	}
	return nil, false
}
