package ref

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"

	"github.com/ainekko/et/internal/ops/parallel"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/ops"
	"github.com/ainekko/et/internal/ops/abi"
)

// MinAlign is the smallest allocation alignment in bytes: the ET cache
// line (rt::DeviceProperties cacheLineSize_, ggml-et's buffer alignment).
const MinAlign = 64

// ErrOutOfMemory is returned by Malloc when no free range fits.
var ErrOutOfMemory = errors.New("out of device memory")

// block is one live allocation. Its Go memory (data) is allocated on first
// touch, so the address space is sparse: a large untouched allocation
// costs nothing.
type block struct {
	base, size uint64
	data       []byte
}

func (b *block) end() uint64 { return b.base + b.size }

// span is a free address range [lo, hi).
type span struct{ lo, hi uint64 }

// memory is the device address space: a first-fit allocator over
// [lo, hi) with a sorted, coalesced free list, and the live blocks sorted
// by base address.
type memory struct {
	lo, hi  uint64
	free    []span
	blocks  []*block // sorted by base
	host    uint64   // bytes of Go memory held by touched blocks
	maxHost uint64   // 0 = no limit
	// gen counts the changes of the live allocations (malloc, free): a
	// tensor made of device memory stays valid while gen is unchanged.
	gen uint64
}

func newMemory(base, size, maxHost uint64) *memory {
	return &memory{lo: base, hi: base + size, free: []span{{base, base + size}}, maxHost: maxHost}
}

func alignUp(x, a uint64) (uint64, bool) {
	r, carry := bits.Add64(x, a-1, 0)
	if carry != 0 {
		return 0, false
	}
	return r &^ (a - 1), true
}

// malloc reserves size bytes aligned to align (rounded up to MinAlign).
// The reservation is rounded up to whole cache lines; Write, Read and
// kernels may touch only the size bytes asked for.
func (m *memory) malloc(size, align uint64) (uint64, error) {
	if size == 0 {
		return 0, fmt.Errorf("malloc: size 0")
	}
	if align == 0 {
		align = MinAlign
	}
	if align&(align-1) != 0 {
		return 0, fmt.Errorf("malloc: alignment %d is not a power of two", align)
	}
	align = max(align, MinAlign)
	reserve, ok := alignUp(size, MinAlign)
	if !ok || reserve > m.hi-m.lo {
		return 0, fmt.Errorf("malloc %d bytes: %w (the device has %d bytes)", size, ErrOutOfMemory, m.hi-m.lo)
	}
	for i, f := range m.free {
		a, ok := alignUp(f.lo, align)
		if !ok || a >= f.hi || f.hi-a < reserve {
			continue
		}
		var repl []span
		if a > f.lo {
			repl = append(repl, span{f.lo, a})
		}
		if a+reserve < f.hi {
			repl = append(repl, span{a + reserve, f.hi})
		}
		m.free = append(m.free[:i], append(repl, m.free[i+1:]...)...)
		b := &block{base: a, size: size}
		j := sort.Search(len(m.blocks), func(j int) bool { return m.blocks[j].base > a })
		m.blocks = append(m.blocks, nil)
		copy(m.blocks[j+1:], m.blocks[j:])
		m.blocks[j] = b
		m.gen++
		return a, nil
	}
	return 0, fmt.Errorf("malloc %d bytes aligned to %d: %w (largest free range %d bytes)", size, align, ErrOutOfMemory, m.largestFree())
}

func (m *memory) largestFree() uint64 {
	var n uint64
	for _, f := range m.free {
		n = max(n, f.hi-f.lo)
	}
	return n
}

// freeBlock releases the allocation that starts at p.
func (m *memory) freeBlock(p uint64) error {
	j := sort.Search(len(m.blocks), func(j int) bool { return m.blocks[j].base >= p })
	if j == len(m.blocks) || m.blocks[j].base != p {
		return fmt.Errorf("free %#x: not the start of an allocation", p)
	}
	b := m.blocks[j]
	m.blocks = append(m.blocks[:j], m.blocks[j+1:]...)
	m.gen++
	if b.data != nil {
		m.host -= uint64(len(b.data))
	}
	reserve, _ := alignUp(b.size, MinAlign)
	s := span{b.base, b.base + reserve}
	i := sort.Search(len(m.free), func(i int) bool { return m.free[i].lo >= s.lo })
	m.free = append(m.free, span{})
	copy(m.free[i+1:], m.free[i:])
	m.free[i] = s
	// Coalesce with the neighbours.
	if i+1 < len(m.free) && m.free[i].hi == m.free[i+1].lo {
		m.free[i].hi = m.free[i+1].hi
		m.free = append(m.free[:i+1], m.free[i+2:]...)
	}
	if i > 0 && m.free[i-1].hi == m.free[i].lo {
		m.free[i-1].hi = m.free[i].hi
		m.free = append(m.free[:i], m.free[i+1:]...)
	}
	return nil
}

// find returns the live block that contains address p, or nil.
func (m *memory) find(p uint64) *block {
	j := sort.Search(len(m.blocks), func(j int) bool { return m.blocks[j].base > p })
	if j == 0 {
		return nil
	}
	b := m.blocks[j-1]
	if p >= b.end() {
		return nil
	}
	return b
}

// rangeBlock returns the block that holds all of [p, p+n), or an error
// naming the first address outside it.
func (m *memory) rangeBlock(p, n uint64) (*block, uint64, error) {
	b := m.find(p)
	if b == nil {
		return nil, p, fmt.Errorf("address %#x is not inside any allocation", p)
	}
	end, carry := bits.Add64(p, n, 0)
	if carry != 0 || end > b.end() {
		return nil, b.end(), fmt.Errorf("range [%#x, +%d) runs past the end of the allocation [%#x, %#x)", p, n, b.base, b.end())
	}
	return b, 0, nil
}

// touch gives the block its Go memory on first use.
func (m *memory) touch(b *block) error {
	if b.data != nil {
		return nil
	}
	if m.maxHost > 0 && m.host+b.size > m.maxHost {
		return fmt.Errorf("allocation [%#x, +%d) needs host memory past the reference device's limit of %d bytes", b.base, b.size, m.maxHost)
	}
	if b.size > uint64(int(^uint(0)>>1)) {
		return fmt.Errorf("allocation of %d bytes does not fit in host memory", b.size)
	}
	b.data = make([]byte, b.size)
	m.host += b.size
	return nil
}

func (m *memory) write(p uint64, src []byte) error {
	b, _, err := m.rangeBlock(p, uint64(len(src)))
	if err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if err := m.touch(b); err != nil {
		return err
	}
	copyParallel(b.data[p-b.base:], src)
	return nil
}

// copyChunk is how many bytes of an upload one goroutine of copyParallel
// copies at a time.
const copyChunk = 1 << 20

// copyParallel copies src into dst on the reference math's goroutines
// when src is several chunks long: a model's weights are uploaded into
// memory the block has just been given, whose pages the kernel faults in
// and zeroes as the copy first writes them (llama_layer_4096's uploads
// took 0.57 s on one goroutine on the Zen 5 VM, its whole run 1.3 s;
// 0.95 s with this).
func copyParallel(dst, src []byte) {
	n := len(src)
	if n < 4*copyChunk {
		copy(dst, src)
		return
	}
	dst = dst[:n]
	chunks := (n + copyChunk - 1) / copyChunk
	parallel.For(chunks, 1, func(lo, hi int) {
		copy(dst[lo*copyChunk:min(n, hi*copyChunk)], src[lo*copyChunk:min(n, hi*copyChunk)])
	})
}

func (m *memory) read(p uint64, dst []byte) error {
	b, _, err := m.rangeBlock(p, uint64(len(dst)))
	if err != nil {
		return err
	}
	if b.data == nil {
		clear(dst) // never written: zeros, without allocating
		return nil
	}
	copy(dst, b.data[p-b.base:])
	return nil
}

// bytes returns the device memory [p, p+n) for a kernel to access, or an
// access fault (store selects the store-fault cause).
func (m *memory) bytes(p, n uint64, store bool, what string) ([]byte, error) {
	b, bad, err := m.rangeBlock(p, n)
	if err != nil {
		return nil, accessFault(store, bad, fmt.Sprintf("%s: %v", what, err))
	}
	if err := m.touch(b); err != nil {
		return nil, userError(fmt.Sprintf("%s: %v", what, err))
	}
	off := p - b.base
	return b.data[off : off+n : off+n], nil
}

// tensorSpan is ggml_nbytes of a device tensor with overflow checks: the
// bytes from data that the tensor's elements can touch.
func tensorSpan(t abi.TensorDesc) (uint64, error) {
	for i, n := range t.Ne {
		if n < 0 || n > 1<<40 {
			return 0, fmt.Errorf("ne%d = %d is out of range", i, n)
		}
	}
	if t.Ne[0] == 0 || t.Ne[1] == 0 || t.Ne[2] == 0 || t.Ne[3] == 0 {
		return 0, nil
	}
	bs := int64(t.Type.BlockSize())
	if t.Ne[0]%bs != 0 {
		return 0, fmt.Errorf("ne0 = %d is not a multiple of the %s block size %d", t.Ne[0], t.Type, bs)
	}
	mulAdd := func(acc, a, b uint64) (uint64, bool) {
		hi, lo := bits.Mul64(a, b)
		if hi != 0 {
			return 0, false
		}
		s, c := bits.Add64(acc, lo, 0)
		return s, c == 0
	}
	var n uint64
	ok := true
	if bs == 1 {
		n = uint64(t.Type.TypeSize())
		for i := 0; i < ops.MaxDims && ok; i++ {
			n, ok = mulAdd(n, uint64(t.Ne[i]-1), t.Nb[i])
		}
	} else {
		n, ok = mulAdd(0, uint64(t.Ne[0]/bs), t.Nb[0])
		for i := 1; i < ops.MaxDims && ok; i++ {
			n, ok = mulAdd(n, uint64(t.Ne[i]-1), t.Nb[i])
		}
	}
	if !ok {
		return 0, fmt.Errorf("ne %v with nb %v overflows the address space", t.Ne, t.Nb)
	}
	return n, nil
}

// tensor maps a device tensor to a host ops.Tensor over the device memory
// of its allocation (Buf is the allocation, Offs the offset of data in
// it), after checking that every byte it can touch lies inside that one
// allocation. A tensor outside any allocation is an access fault, as a
// kernel load or store there would be.
func (m *memory) tensor(field string, t abi.TensorDesc, store bool) (*ops.Tensor, error) {
	n, err := tensorSpan(t)
	if err != nil {
		return nil, userError(fmt.Sprintf("tensor %s: %v", field, err))
	}
	b, bad, err := m.rangeBlock(t.Data, max(n, 1))
	if err != nil {
		return nil, accessFault(store, bad, fmt.Sprintf("tensor %s (%s %v, data %#x, %d bytes): %v", field, t.Type, t.Ne, t.Data, n, err))
	}
	// A real tensor has no more elements than its bytes can hold (times the
	// block size); more means zero strides over a garbage shape, which a
	// kernel would loop over for ever.
	elems, ok := uint64(1), true
	for _, ne := range t.Ne {
		hi, lo := bits.Mul64(elems, uint64(ne))
		elems, ok = lo, ok && hi == 0 && ne >= 0
	}
	if !ok || elems > b.size*uint64(t.Type.BlockSize()) {
		return nil, userError(fmt.Sprintf("tensor %s: shape %v has more elements than its %d-byte allocation can hold", field, t.Ne, b.size))
	}
	if err := m.touch(b); err != nil {
		return nil, userError(fmt.Sprintf("tensor %s: %v", field, err))
	}
	return &ops.Tensor{Name: field, Type: t.Type, Ne: t.Ne, Nb: t.Nb, Buf: b.data, Offs: t.Data - b.base}, nil
}

// A kernel fault: what the runtime reports at synchronize.
type fault struct {
	code string
	msg  string
	ctx  []driver.ErrorContext
}

func (f *fault) Error() string { return f.code + ": " + f.msg }

// The DeviceErrorCode names (rt::DeviceErrorCode, reference
// et-driver-and-sysemu.md §5.1) the reference device reports.
const (
	// CodeException: a U-mode exception, here a load or store outside any
	// allocation; the context carries the RISC-V cause and the address.
	CodeException = "KernelLaunchException"
	// CodeUserError: the kernel returned a negative value (it rejected its
	// params, met an unknown uberkernel id, or has no reference math).
	CodeUserError = "KernelLaunchResponseUserError"
	// CodeInvalidArgsSize: the args are not the size of the kernel's
	// params struct.
	CodeInvalidArgsSize = "KernelLaunchInvalidArgsPayloadSize"
	// CodeUnexpected: the reference math itself failed (a bug in et).
	CodeUnexpected = "KernelLaunchUnexpectedError"
)

// RISC-V mcause values of access faults.
const (
	causeLoadAccessFault  = 5
	causeStoreAccessFault = 7
)

func accessFault(store bool, addr uint64, msg string) *fault {
	c := driver.ErrorContext{Cause: causeLoadAccessFault, TVal: addr, Detail: "load access fault",
		Kind: "U-mode exception", Unfilled: "epc"} // the model has no program counter
	if store {
		c.Cause, c.Detail = causeStoreAccessFault, "store access fault"
	}
	return &fault{code: CodeException, msg: msg, ctx: []driver.ErrorContext{c}}
}

func userError(msg string) *fault {
	return &fault{code: CodeUserError, msg: msg, ctx: []driver.ErrorContext{kernelErrorContext()}}
}

// kernelErrorContext is the context of a kernel that returned -1: like
// the runtime's, it fills only the user error.
func kernelErrorContext() driver.ErrorContext {
	return driver.ErrorContext{Detail: "kernel execution error: returned -1", Kind: "kernel execution error",
		UserError: -1, HasUserError: true, Unfilled: "cause,epc,tval"}
}
