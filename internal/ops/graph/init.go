package graph

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ainekko/et/internal/ops"
)

// Init says how a leaf tensor is filled. Func is one of
// uniform(a, b), normal(mean, std), arange(start[, step]), zeros, ones,
// randint(lo, hi), perm(n), kq_mask or npy; Args are its numeric arguments; Npy is
// the .npy path as written (relative to the case file's directory).
type Init struct {
	Func string
	Args []float64
	Npy  string
}

// String is the init expression as a case file would spell it.
func (in Init) String() string {
	switch in.Func {
	case "npy":
		return "{npy: " + in.Npy + "}"
	case "zeros", "ones":
		return in.Func
	}
	parts := make([]string, len(in.Args))
	for i, a := range in.Args {
		parts[i] = strconv.FormatFloat(a, 'g', -1, 64)
	}
	return in.Func + "(" + strings.Join(parts, ", ") + ")"
}

// defaultInit is the init of a leaf that names none: uniform(-1, 1) for
// float and quantized types (test-backend-ops' default range) and zeros
// for integer types (always a valid index).
func defaultInit(t ops.Type) Init {
	if isInt(t) {
		return Init{Func: "zeros"}
	}
	return Init{Func: "uniform", Args: []float64{-1, 1}}
}

func isInt(t ops.Type) bool { return t.Integer() }

// initArity gives the accepted argument counts of each init function.
var initArity = map[string][2]int{
	"uniform":  {2, 2},
	"normal":   {2, 2},
	"arange":   {1, 2},
	"zeros":    {0, 0},
	"ones":     {0, 0},
	"randint":  {2, 2},
	"perm":     {1, 1},
	"kq_mask":  {0, 0},
	"hadamard": {0, 0},
}

// ParseInit parses an init expression: uniform(a, b), normal(mean, std),
// arange(start[, step]), zeros, ones, randint(lo, hi) (integers in
// [lo, hi)), perm(n) (each row holds distinct integers from [0, n)),
// kq_mask (test-backend-ops' attention mask: uniform(-1, 1) with blocks of
// 64 rows by 128 columns set to -inf or 0, one block per 40960 elements) or
// hadamard (row r, column i is ±1/sqrt(ne0), negative when r & i has an
// odd number of bits: test-backend-ops' Walsh-Hadamard matrix of
// MUL_MAT_HADAMARD).
// The {npy: file} form is a YAML mapping and is not parsed here.
func ParseInit(s string) (Init, error) {
	s = strings.TrimSpace(s)
	name, rest := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Init{}, fmt.Errorf("bad init %q: missing ')'", s)
		}
		name, rest = strings.TrimSpace(s[:i]), s[i+1:len(s)-1]
	}
	ar, ok := initArity[name]
	if !ok {
		return Init{}, fmt.Errorf("unknown init %q (want uniform(a, b), normal(mean, std), arange(start[, step]), zeros, ones, randint(lo, hi), perm(n), kq_mask, hadamard or {npy: file})", s)
	}
	in := Init{Func: name}
	if strings.TrimSpace(rest) != "" {
		for _, f := range strings.Split(rest, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return Init{}, fmt.Errorf("bad init %q: %q is not a finite number", s, strings.TrimSpace(f))
			}
			in.Args = append(in.Args, v)
		}
	}
	if n := len(in.Args); n < ar[0] || n > ar[1] {
		want := strconv.Itoa(ar[0])
		if ar[1] != ar[0] {
			want = fmt.Sprintf("%d or %d", ar[0], ar[1])
		}
		return Init{}, fmt.Errorf("bad init %q: %s takes %s arguments, got %d", s, name, want, n)
	}
	switch name {
	case "uniform":
		if in.Args[0] > in.Args[1] {
			return Init{}, fmt.Errorf("bad init %q: low bound is above high bound", s)
		}
	case "normal":
		if in.Args[1] < 0 {
			return Init{}, fmt.Errorf("bad init %q: negative standard deviation", s)
		}
	case "randint":
		if !isInteger(in.Args[0]) || !isInteger(in.Args[1]) || in.Args[0] >= in.Args[1] {
			return Init{}, fmt.Errorf("bad init %q: want integers lo < hi", s)
		}
	case "perm":
		if !isInteger(in.Args[0]) || in.Args[0] < 1 || in.Args[0] > 1<<24 {
			return Init{}, fmt.Errorf("bad init %q: n must be an integer in [1, 16777216]", s)
		}
	}
	return in, nil
}

func isInteger(v float64) bool { return v == math.Trunc(v) && math.Abs(v) < 1<<53 }

// checkInit validates an init against the tensor it fills.
func checkInit(in Init, t ops.Type, ne []int64) error {
	if in.Func == "kq_mask" && (isInt(t) || t.BlockSize() != 1) {
		return fmt.Errorf("bad init kq_mask: tensor type %s, want f32 or f16", t)
	}
	if in.Func == "perm" && ne[0] > int64(in.Args[0]) {
		return fmt.Errorf("bad init %s: a row holds %d distinct values, more than n = %d", in, ne[0], int64(in.Args[0]))
	}
	return nil
}

// rng is SplitMix64 seeded with FNV-1a of (seed, tensor name): the data of
// a leaf depends only on the case seed, the tensor name and its shape,
// never on map or declaration order.
type rng struct{ s uint64 }

func newRNG(seed uint64, name string) *rng {
	h := uint64(14695981039346656037)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	for _, c := range append(b[:], name...) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return &rng{s: h}
}

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float returns a uniform value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

// generator yields the values of one leaf in ggml order (ne0 fastest).
type generator struct {
	in    Init
	r     *rng
	ne0   int64
	i     int64
	spare float64
	has   bool
	perm  []int64
}

func newGenerator(in Init, seed uint64, name string, ne0 int64) *generator {
	g := &generator{in: in, r: newRNG(seed, name), ne0: ne0}
	if in.Func == "perm" {
		g.perm = make([]int64, int64(in.Args[0]))
		for i := range g.perm {
			g.perm[i] = int64(i)
		}
	}
	return g
}

func (g *generator) next() float64 {
	i := g.i
	g.i++
	a := g.in.Args
	switch g.in.Func {
	case "zeros":
		return 0
	case "ones":
		return 1
	case "arange":
		step := 1.0
		if len(a) > 1 {
			step = a[1]
		}
		return a[0] + float64(float64(i)*step)
	case "uniform":
		return a[0] + float64((a[1]-a[0])*g.r.float())
	case "normal":
		// Box-Muller, both values of each pair used in turn.
		if g.has {
			g.has = false
			return a[0] + float64(a[1]*g.spare)
		}
		u1 := 1 - g.r.float() // (0, 1]
		u2 := g.r.float()
		rad, c, s := boxMuller(u1, u2)
		g.spare, g.has = float64(rad*s), true
		return normalCos(a[0], a[1], rad, c)
	case "randint":
		lo, hi := int64(a[0]), int64(a[1])
		return float64(lo + int64(g.r.next()%uint64(hi-lo)))
	case "hadamard":
		r, c := i/g.ne0, i%g.ne0
		v := 1 / float32(math.Sqrt(float64(float32(g.ne0)))) // 1.0f/sqrtf(n_cols)
		if bits.OnesCount64(uint64(r&c))%2 != 0 {
			v = -v
		}
		return float64(v)
	case "perm":
		// A partial Fisher-Yates shuffle per row; the pool is not reset
		// between rows (it stays a permutation), so each row's values are
		// distinct.
		k := i % g.ne0
		n := int64(len(g.perm))
		j := k + int64(g.r.next()%uint64(n-k))
		g.perm[k], g.perm[j] = g.perm[j], g.perm[k]
		return float64(g.perm[k])
	}
	panic("graph: unknown init " + g.in.Func)
}

// Materialize builds the leaf tensors of a case, keyed by name. Data are
// deterministic given the case seed and each tensor's name; quantized
// types are quantized from float32 with ggml's reference quantizers;
// .npy paths are relative to c.Dir. It is MaterializeContext without a
// deadline.
func Materialize(c *Case) (map[string]*ops.Tensor, error) {
	return MaterializeContext(context.Background(), c)
}

// MaterializeContext is Materialize that stops, returning ctx.Err(), when
// ctx is done. Large leaves are generated and quantized on
// parallel.Workers() goroutines; the data do not depend on how many.
func MaterializeContext(ctx context.Context, c *Case) (map[string]*ops.Tensor, error) {
	out := make(map[string]*ops.Tensor, len(c.Tensors))
	for i := range c.Tensors {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := &c.Tensors[i]
		x, err := materializeOne(ctx, c, s)
		if err != nil {
			return nil, err
		}
		x.Name = s.Name
		out[s.Name] = x
	}
	return out, nil
}

func materializeOne(ctx context.Context, c *Case, s *TensorSpec) (*ops.Tensor, error) {
	in := s.Init
	if in.Func == "" {
		in = defaultInit(s.Type)
	}
	if err := ops.CodecError(s.Type); err != nil {
		return nil, err
	}
	if in.Func == "npy" {
		return loadNpyLeaf(c, s)
	}
	if in.Func == "kq_mask" {
		return kqMask(c.Seed, s), nil
	}
	x := ops.New(s.Type, s.Ne...)
	if !isInt(s.Type) && randomAccess(in) {
		if err := fillLeaf(ctx, x, in, newRNG(c.Seed, s.Name).s); err != nil {
			return nil, err
		}
		return x, nil
	}
	g := newGenerator(in, c.Seed, s.Name, x.Ne[0])
	if isInt(s.Type) {
		for i3 := int64(0); i3 < x.Ne[3]; i3++ {
			for i2 := int64(0); i2 < x.Ne[2]; i2++ {
				for i1 := int64(0); i1 < x.Ne[1]; i1++ {
					for i0 := int64(0); i0 < x.Ne[0]; i0++ {
						x.SetInt(i0, i1, i2, i3, int64(math.Floor(g.next())))
					}
				}
			}
		}
		return x, nil
	}
	row := make([]float32, x.Ne[0])
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				for i := range row {
					row[i] = float32(g.next())
				}
				x.SetRow(i1, i2, i3, row)
			}
		}
	}
	return x, nil
}

// intRange is the value range of an integer type narrower than i64
// (0, 0 for i64).
func intRange(t ops.Type) (lo, hi int64) {
	switch t {
	case ops.I8:
		return math.MinInt8, math.MaxInt8
	case ops.I16:
		return math.MinInt16, math.MaxInt16
	case ops.I32:
		return math.MinInt32, math.MaxInt32
	}
	return 0, 0
}

// loadNpyLeaf reads a tensor's .npy file. Errors name the case's file and
// line and the tensor, then the .npy file.
func loadNpyLeaf(c *Case, s *TensorSpec) (*ops.Tensor, error) {
	x, err := readNpyLeaf(c, s)
	if err != nil {
		return nil, &Error{File: c.File, Line: s.Line, Msg: fmt.Sprintf("tensor %s: %v", s.Name, err)}
	}
	return x, nil
}

func readNpyLeaf(c *Case, s *TensorSpec) (*ops.Tensor, error) {
	path := s.Init.Npy
	if !filepath.IsAbs(path) {
		path = filepath.Join(c.Dir, path)
	}
	n := int64(1)
	for _, d := range s.Ne {
		n *= d
	}
	a, err := ReadNpyFileMax(path, n*npyMaxDtype)
	if err != nil {
		return nil, err
	}
	if !shapeMatches(a.Shape, s.Ne) {
		return nil, &Error{File: path, Msg: fmt.Sprintf("shape %s does not match tensor %s ne %v (want numpy shape %s: ne reversed, trailing 1s dropped)",
			npyShapeString(a.Shape), s.Name, s.Ne, npyShapeString(NpyShape(s.Ne)))}
	}
	if isInt(s.Type) {
		v, err := a.Int64s()
		if err != nil {
			return nil, &Error{File: path, Msg: fmt.Sprintf("tensor %s is %s: %v", s.Name, s.Type, err)}
		}
		if lo, hi := intRange(s.Type); lo != 0 || hi != 0 {
			for i, x := range v {
				if x < lo || x > hi {
					return nil, &Error{File: path, Msg: fmt.Sprintf("element %d = %d does not fit tensor %s's type %s", i, x, s.Name, s.Type)}
				}
			}
		}
		return ops.FromInts(s.Type, s.Ne, v), nil
	}
	v, err := a.Float32s()
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("tensor %s is %s: %v", s.Name, s.Type, err)}
	}
	return ops.FromF32(s.Type, s.Ne, v), nil
}

// kqMask is test-backend-ops' init_tensor_kq_mask with et's generator:
// uniform(-1, 1), then floor(0.2·N / (128·64)) blocks, each at a random
// (i0, i1, i2, i3), of up to 64 rows by 128 columns set to -inf or 0 (a
// fair coin per block).
func kqMask(seed uint64, s *TensorSpec) *ops.Tensor {
	var ne [ops.MaxDims]int64
	for d := range ne {
		ne[d] = 1
	}
	copy(ne[:], s.Ne)
	n := ne[0] * ne[1] * ne[2] * ne[3]
	r := newRNG(seed, s.Name)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(-1 + 2*r.float())
	}
	const blck0, blck1 = 128, 64
	nBlocks := int64(0.2 * float64(n) / (blck0 * blck1))
	for range nBlocks {
		p3 := int64(r.next() % uint64(ne[3]))
		p2 := int64(r.next() % uint64(ne[2]))
		p1 := int64(r.next() % uint64(ne[1]))
		p0 := int64(r.next() % uint64(ne[0]))
		val := float32(0)
		if r.next()&1 != 0 {
			val = float32(math.Inf(-1))
		}
		for i1 := p1; i1 < p1+blck1 && i1 < ne[1]; i1++ {
			row := ((p3*ne[2]+p2)*ne[1] + i1) * ne[0]
			for i0 := p0; i0 < p0+blck0 && i0 < ne[0]; i0++ {
				v[row+i0] = val
			}
		}
	}
	return ops.FromF32(s.Type, s.Ne, v)
}
