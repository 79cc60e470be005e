package abi

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ainekko/et/internal/ops"
)

// DefaultManifestName is the name of the embedded manifest.
const DefaultManifestName = "ggml-d99724f.yaml"

//go:embed manifest/ggml-d99724f.yaml
var defaultManifest []byte

// Manifest holds the version-pinned facts of one ggml build: enum values,
// uberkernel kernel ids, the kernel → params-struct map and struct sizes.
// A Manifest is immutable once loaded and safe for concurrent use.
type Manifest struct {
	source   string
	commit   string
	describe string

	ops, unary, glu, rope      map[string]int32
	opName, unaryName, gluName map[int32]string
	tri                        map[string]int32 // optional section tri_types
	triName                    map[int32]string
	types                      map[ops.Type]int32
	typeOf                     map[int32]ops.Type
	uberAlign                  int
	uberID                     map[string]uint16
	uberKernel                 map[uint16]string
	kernels                    map[string]string // kernel → layout name
	sizes                      map[string]int
}

var defaultOnce = sync.OnceValue(func() *Manifest {
	m, err := Parse("embedded:"+DefaultManifestName, defaultManifest)
	if err != nil {
		panic("abi: the embedded manifest is invalid: " + err.Error()) // the tests load it
	}
	return m
})

// Default returns the embedded manifest (ggml d99724f), parsed on first use.
func Default() *Manifest { return defaultOnce() }

// DefaultYAML returns the bytes of the embedded manifest (a template for
// writing one for another ggml version).
func DefaultYAML() []byte { return append([]byte(nil), defaultManifest...) }

// MaxManifest bounds a manifest file (the embedded one is about 40 KiB).
const MaxManifest = 64 << 20

// Load reads a manifest file of at most MaxManifest bytes. Errors are
// *ManifestError, with the file's line where the problem is. (et --abi
// reads the file with a context first, then calls Parse.)
func Load(path string) (*Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ManifestError{File: path, Msg: "cannot read the ABI manifest", Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifest+1))
	if err == nil && len(data) > MaxManifest {
		err = fmt.Errorf("longer than %d MiB", MaxManifest>>20)
	}
	if err != nil {
		return nil, &ManifestError{File: path, Msg: "cannot read the ABI manifest", Err: err}
	}
	return Parse(path, data)
}

// ManifestError is a malformed or incomplete ABI manifest.
type ManifestError struct {
	File string
	Line int // 0 when the error concerns the whole file
	Msg  string
	Err  error // the underlying error, if any
}

func (e *ManifestError) Error() string {
	msg := e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
	}
	return fmt.Sprintf("%s: %s", e.File, msg)
}

func (e *ManifestError) Unwrap() error { return e.Err }

// InputError marks the error as bad input (exit 2).
func (e *ManifestError) InputError() {}

// The enum entries et relies on; a manifest without them is rejected.
var (
	requiredOps = []string{
		"ADD", "SUB", "MUL", "SQR", "SUM_ROWS", "CUMSUM", "MEAN", "REPEAT", "CONCAT",
		"NORM", "RMS_NORM", "GROUP_NORM", "L2_NORM", "MUL_MAT", "MUL_MAT_ID", "SCALE",
		"SET", "CPY", "CONT", "GET_ROWS", "SET_ROWS", "DIAG", "SOFT_MAX", "ROPE", "CLAMP",
		"IM2COL", "CONV_2D", "PAD", "TRI", "FILL", "FLASH_ATTN_EXT", "SSM_CONV",
		"SSM_SCAN", "RWKV_WKV6", "RWKV_WKV7", "SOLVE_TRI", "GATED_DELTA_NET", "UNARY", "GLU",
	}
	requiredUnary = []string{
		"ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID", "GELU", "GELU_QUICK",
		"SILU", "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF",
		"FLOOR", "CEIL", "ROUND", "TRUNC",
	}
	requiredGLU  = []string{"REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK"}
	requiredRope = []string{"NORMAL", "NEOX", "MROPE", "IMROPE"}
)

// Parse parses manifest YAML; name labels errors (a path, or
// "embedded:..."). Parsing is strict: unknown keys, duplicate keys or
// values, values out of range and missing required entries are errors.
func Parse(name string, data []byte) (*Manifest, error) {
	p := &parser{file: name}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ManifestError{File: name, Msg: "empty ABI manifest"}
		}
		return nil, p.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ManifestError{File: name, Line: extra.Line, Msg: "more than one YAML document"}
	} else if !errors.Is(err, io.EOF) {
		return nil, p.yamlError(err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	m, err := p.manifest(root)
	if err != nil {
		return nil, err
	}
	m.source = name
	return m, nil
}

type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &ManifestError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) yamlError(err error) error {
	// yaml.v3 syntax errors read "yaml: line N: msg".
	if rest, ok := strings.CutPrefix(err.Error(), "yaml: line "); ok {
		if num, msg, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil && line > 0 {
				return &ManifestError{File: p.file, Line: line, Msg: "invalid YAML: " + msg}
			}
		}
	}
	return &ManifestError{File: p.file, Msg: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

// entry is one key: value pair of a mapping.
type entry struct {
	key   string
	kn, v *yaml.Node
}

// mapping returns the pairs of a mapping node, rejecting duplicate keys and
// keys not in allowed (when allowed is non-nil).
func (p *parser) mapping(n *yaml.Node, what string, allowed []string) ([]entry, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s: want a mapping", what)
	}
	seen := map[string]bool{}
	var out []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, "%s: keys must be scalars", what)
		}
		if allowed != nil && !slices.Contains(allowed, k.Value) {
			return nil, p.errf(k, "%s: unknown key %q (want one of %s)", what, k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, p.errf(k, "%s: duplicate key %q", what, k.Value)
		}
		seen[k.Value] = true
		if v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		out = append(out, entry{key: k.Value, kn: k, v: v})
	}
	return out, nil
}

func (p *parser) integer(n *yaml.Node, what string, lo, hi int64) (int64, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, p.errf(n, "%s: want an integer, got %q", what, n.Value)
	}
	var x int64
	if err := n.Decode(&x); err != nil {
		return 0, p.errf(n, "%s: want an integer, got %q", what, n.Value)
	}
	if x < lo || x > hi {
		return 0, p.errf(n, "%s: %d is out of range [%d, %d]", what, x, lo, hi)
	}
	return x, nil
}

func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Value == "" {
		return "", p.errf(n, "%s: want a non-empty string", what)
	}
	return n.Value, nil
}

var topKeys = []string{"ggml", "ops", "types", "unary_ops", "glu_ops", "rope_modes", "tri_types", "uberkernel", "kernels", "sizes"}

// optionalKeys are the top-level sections a manifest may leave out (older
// manifests were written before they existed); et then reports the
// values they hold as unknown where an op needs them.
var optionalKeys = []string{"tri_types"}

func (p *parser) manifest(root *yaml.Node) (*Manifest, error) {
	top, err := p.mapping(root, "manifest", topKeys)
	if err != nil {
		return nil, err
	}
	sec := map[string]entry{}
	for _, e := range top {
		sec[e.key] = e
	}
	m := &Manifest{}
	// Sections are checked in dependency order (uberkernel before kernels);
	// missing sections are reported after the present ones are checked, so
	// that a typo in a key name is reported as such.
	steps := map[string]func(entry) error{
		"ggml": func(e entry) error { return p.ggml(m, e) },
		"ops": func(e entry) (err error) {
			m.ops, m.opName, err = p.enum(e, "GGML_OP_", requiredOps)
			return err
		},
		"types": func(e entry) error { return p.types(m, e) },
		"unary_ops": func(e entry) (err error) {
			m.unary, m.unaryName, err = p.enum(e, "GGML_UNARY_OP_", requiredUnary)
			return err
		},
		"glu_ops": func(e entry) (err error) {
			m.glu, m.gluName, err = p.enum(e, "GGML_GLU_OP_", requiredGLU)
			return err
		},
		"rope_modes": func(e entry) (err error) {
			m.rope, _, err = p.enum(e, "GGML_ROPE_TYPE_", requiredRope)
			return err
		},
		"tri_types": func(e entry) (err error) {
			m.tri, m.triName, err = p.enum(e, "GGML_TRI_TYPE_", nil)
			return err
		},
		"uberkernel": func(e entry) error { return p.uberkernel(m, e) },
		"kernels":    func(e entry) error { return p.kernels(m, e) },
		"sizes":      func(e entry) error { return p.sizes(m, e) },
	}
	for _, k := range topKeys {
		if e, ok := sec[k]; ok {
			if err := steps[k](e); err != nil {
				return nil, err
			}
		}
	}
	for _, k := range topKeys {
		if _, ok := sec[k]; !ok && !slices.Contains(optionalKeys, k) {
			return nil, p.errf(root, "missing required section %q", k)
		}
	}
	return m, nil
}

func (p *parser) ggml(m *Manifest, sec entry) error {
	es, err := p.mapping(sec.v, "ggml", []string{"commit", "describe"})
	if err != nil {
		return err
	}
	for _, e := range es {
		s, err := p.str(e.v, "ggml."+e.key)
		if err != nil {
			return err
		}
		if e.key == "commit" {
			m.commit = s
		} else {
			m.describe = s
		}
	}
	if m.commit == "" {
		return p.errf(sec.kn, "ggml: missing required key \"commit\"")
	}
	return nil
}

// enum reads a name → int32 mapping of a ggml enum. Names are stored in
// upper case without the C prefix; values must be unique.
func (p *parser) enum(sec entry, prefix string, required []string) (map[string]int32, map[int32]string, error) {
	es, err := p.mapping(sec.v, sec.key, nil)
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]int32, len(es))
	byValue := make(map[int32]string, len(es))
	for _, e := range es {
		name := strings.ToUpper(strings.TrimPrefix(e.key, prefix))
		if name == "" {
			return nil, nil, p.errf(e.kn, "%s: empty name", sec.key)
		}
		if _, dup := byName[name]; dup {
			return nil, nil, p.errf(e.kn, "%s: duplicate name %q", sec.key, name)
		}
		x, err := p.integer(e.v, sec.key+"."+e.key, -1<<31, 1<<31-1)
		if err != nil {
			return nil, nil, err
		}
		v := int32(x)
		if other, dup := byValue[v]; dup {
			return nil, nil, p.errf(e.v, "%s.%s: value %d is already used by %s", sec.key, e.key, v, other)
		}
		byName[name] = v
		byValue[v] = name
	}
	for _, r := range required {
		if _, ok := byName[r]; !ok {
			return nil, nil, p.errf(sec.kn, "%s: missing required entry %s%s", sec.key, prefix, r)
		}
	}
	return byName, byValue, nil
}

func (p *parser) types(m *Manifest, sec entry) error {
	es, err := p.mapping(sec.v, "types", nil)
	if err != nil {
		return err
	}
	m.types = map[ops.Type]int32{}
	m.typeOf = map[int32]ops.Type{}
	for _, e := range es {
		t, err := ops.ParseType(e.key)
		if err != nil {
			return p.errf(e.kn, "types: %v", err)
		}
		if _, dup := m.types[t]; dup {
			return p.errf(e.kn, "types: duplicate type %s", t)
		}
		x, err := p.integer(e.v, "types."+e.key, 0, 1<<31-1)
		if err != nil {
			return err
		}
		v := int32(x)
		if other, dup := m.typeOf[v]; dup {
			return p.errf(e.v, "types.%s: value %d is already used by %s", e.key, v, other)
		}
		m.types[t] = v
		m.typeOf[v] = t
	}
	for _, t := range requiredTypes {
		if _, ok := m.types[t]; !ok {
			return p.errf(sec.kn, "types: missing required type %s", t)
		}
	}
	return nil
}

// requiredTypes are the types the ET kernels read and write: a manifest
// must give their values. The other ggml types are optional (older ggml
// versions lack some), so a tensor of a type the manifest leaves out
// cannot be encoded for the device.
var requiredTypes = []ops.Type{ops.F32, ops.F16, ops.Q4_0, ops.Q8_0, ops.Q4_K, ops.I32, ops.I64}

func (p *parser) uberkernel(m *Manifest, sec entry) error {
	es, err := p.mapping(sec.v, "uberkernel", []string{"param_align", "kernels"})
	if err != nil {
		return err
	}
	var haveAlign, haveKernels bool
	for _, e := range es {
		switch e.key {
		case "param_align":
			x, err := p.integer(e.v, "uberkernel.param_align", 8, 1<<20)
			if err != nil {
				return err
			}
			if x&(x-1) != 0 {
				return p.errf(e.v, "uberkernel.param_align: %d is not a power of two", x)
			}
			m.uberAlign, haveAlign = int(x), true
		case "kernels":
			ks, err := p.mapping(e.v, "uberkernel.kernels", nil)
			if err != nil {
				return err
			}
			m.uberID = make(map[string]uint16, len(ks))
			m.uberKernel = make(map[uint16]string, len(ks))
			for _, k := range ks {
				x, err := p.integer(k.v, "uberkernel.kernels."+k.key, 1, 65535)
				if err != nil {
					return err
				}
				id := uint16(x)
				if other, dup := m.uberKernel[id]; dup {
					return p.errf(k.v, "uberkernel.kernels.%s: id %d is already used by %s", k.key, id, other)
				}
				m.uberID[k.key] = id
				m.uberKernel[id] = k.key
			}
			haveKernels = true
		}
	}
	if !haveAlign {
		return p.errf(sec.kn, "uberkernel: missing required key \"param_align\"")
	}
	if !haveKernels {
		return p.errf(sec.kn, "uberkernel: missing required key \"kernels\"")
	}
	return nil
}

func (p *parser) kernels(m *Manifest, sec entry) error {
	es, err := p.mapping(sec.v, "kernels", nil)
	if err != nil {
		return err
	}
	m.kernels = make(map[string]string, len(es))
	for _, e := range es {
		name, err := p.str(e.v, "kernels."+e.key)
		if err != nil {
			return err
		}
		if _, ok := LookupLayout(name); !ok {
			return p.errf(e.v, "kernels.%s: unknown params layout %q", e.key, name)
		}
		m.kernels[e.key] = name
	}
	for _, k := range keysOf(m.uberID) {
		if _, ok := m.kernels[k]; !ok {
			return p.errf(sec.kn, "kernels: uberkernel kernel %s has no entry", k)
		}
	}
	return nil
}

func (p *parser) sizes(m *Manifest, sec entry) error {
	es, err := p.mapping(sec.v, "sizes", nil)
	if err != nil {
		return err
	}
	m.sizes = make(map[string]int, len(es))
	for _, e := range es {
		x, err := p.integer(e.v, "sizes."+e.key, 1, 1<<20)
		if err != nil {
			return err
		}
		if e.key == "tensor" {
			if x != TensorSize {
				return p.errf(e.v, "sizes.tensor: struct ggml_tensor of %d bytes is not supported (et's codec is for %d)", x, TensorSize)
			}
		} else {
			l, ok := LookupLayout(e.key)
			if !ok {
				return p.errf(e.kn, "sizes: unknown params struct %q", e.key)
			}
			if int(x) != l.Size {
				return p.errf(e.v, "sizes.%s: %d bytes, but et's %s layout is %d bytes (this ggml changed the struct; et needs a new layout)", e.key, x, e.key, l.Size)
			}
		}
		m.sizes[e.key] = int(x)
	}
	if _, ok := m.sizes["tensor"]; !ok {
		return p.errf(sec.kn, "sizes: missing required entry \"tensor\"")
	}
	return nil
}

// Source is where the manifest came from (a path or "embedded:...").
func (m *Manifest) Source() string { return m.source }

// GGMLCommit is the ggml commit the manifest describes.
func (m *Manifest) GGMLCommit() string { return m.commit }

// GGMLDescribe is the manifest's free-form version description.
func (m *Manifest) GGMLDescribe() string { return m.describe }

func enumKey(name, prefix string) string {
	return strings.TrimPrefix(strings.ToUpper(name), prefix)
}

// OpValue returns the GGML_OP_* value of an op name (mul_mat, MUL_MAT or
// GGML_OP_MUL_MAT).
func (m *Manifest) OpValue(name string) (int32, bool) {
	v, ok := m.ops[enumKey(name, "GGML_OP_")]
	return v, ok
}

// OpName returns the upper-case name (MUL_MAT) of a GGML_OP_* value.
func (m *Manifest) OpName(v int32) (string, bool) {
	n, ok := m.opName[v]
	return n, ok
}

// TypeValue returns the GGML_TYPE_* value of a type.
func (m *Manifest) TypeValue(t ops.Type) (int32, bool) {
	v, ok := m.types[t]
	return v, ok
}

// TypeFromValue returns the type of a GGML_TYPE_* value.
func (m *Manifest) TypeFromValue(v int32) (ops.Type, bool) {
	t, ok := m.typeOf[v]
	return t, ok
}

// UnaryValue returns the GGML_UNARY_OP_* value of a unary op name (silu,
// SILU or GGML_UNARY_OP_SILU).
func (m *Manifest) UnaryValue(name string) (int32, bool) {
	v, ok := m.unary[enumKey(name, "GGML_UNARY_OP_")]
	return v, ok
}

// UnaryName returns the upper-case name of a GGML_UNARY_OP_* value.
func (m *Manifest) UnaryName(v int32) (string, bool) {
	n, ok := m.unaryName[v]
	return n, ok
}

// GLUValue returns the GGML_GLU_OP_* value of a GLU op name (swiglu ...).
func (m *Manifest) GLUValue(name string) (int32, bool) {
	v, ok := m.glu[enumKey(name, "GGML_GLU_OP_")]
	return v, ok
}

// GLUName returns the upper-case name of a GGML_GLU_OP_* value.
func (m *Manifest) GLUName(v int32) (string, bool) {
	n, ok := m.gluName[v]
	return n, ok
}

// RopeMode returns the GGML_ROPE_TYPE_* value of a rope mode name (normal,
// neox, mrope, vision, imrope).
func (m *Manifest) RopeMode(name string) (int32, bool) {
	v, ok := m.rope[enumKey(name, "GGML_ROPE_TYPE_")]
	return v, ok
}

// TriValue returns the GGML_TRI_TYPE_* value of a tri type name (lower,
// LOWER_DIAG or GGML_TRI_TYPE_UPPER ...); ok is false when the manifest
// has no tri_types section or no such entry.
func (m *Manifest) TriValue(name string) (int32, bool) {
	v, ok := m.tri[enumKey(name, "GGML_TRI_TYPE_")]
	return v, ok
}

// TriName returns the upper-case name of a GGML_TRI_TYPE_* value.
func (m *Manifest) TriName(v int32) (string, bool) {
	n, ok := m.triName[v]
	return n, ok
}

// UberkernelID returns the uberkernel kernel id of a kernel; ok is false
// for a kernel that cannot be batched.
func (m *Manifest) UberkernelID(kernel string) (uint16, bool) {
	id, ok := m.uberID[kernel]
	return id, ok
}

// UberkernelKernel returns the kernel an uberkernel id dispatches to.
func (m *Manifest) UberkernelKernel(id uint16) (string, bool) {
	k, ok := m.uberKernel[id]
	return k, ok
}

// UberkernelParamAlign is the alignment of each params struct in the
// uberkernel params blob (64).
func (m *Manifest) UberkernelParamAlign() int { return m.uberAlign }

// LayoutFor returns the params layout a kernel reads.
func (m *Manifest) LayoutFor(kernel string) (*Layout, bool) {
	name, ok := m.kernels[kernel]
	if !ok {
		return nil, false
	}
	return LookupLayout(name)
}

// Kernels lists the kernels of the manifest's kernel map, sorted.
func (m *Manifest) Kernels() []string {
	out := keysOf(m.kernels)
	sort.Strings(out)
	return out
}

// Size returns a struct size from the manifest ("tensor" or a layout name).
func (m *Manifest) Size(name string) (int, bool) {
	s, ok := m.sizes[name]
	return s, ok
}
