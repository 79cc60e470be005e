package cpu

import (
	"math/bits"
	"sync"
)

// A scratchPool keeps the work areas of ops between calls: the
// activations a MUL_MAT converts, FLASH_ATTN_EXT's scores and softmax
// factors, a row buffer per worker. Fresh memory of that size costs more
// than the op's arithmetic in places: the Go heap hands it out in pages
// the kernel has to fault in and zero (on these VMs, about 3 ms of
// FLASH_ATTN_EXT's 2.2 MB a launch at n = 1 against its 3.5 ms of work),
// until a collection frees enough to reuse. ggml's CPU backend plans its
// work buffer once per graph; a pool is the same for calls that come and
// go.
//
// The slices go by size class, a power of two of elements each, so that
// a small request never takes the slice a large one needs. get's slices
// hold whatever their last user left there: callers write before they
// read, or clear what they need zeroed.
type ScratchPool[T any] struct{ class [bits.UintSize]sync.Pool }

// Get returns a slice of n elements, reused when the pool has one of n's
// class.
func (s *ScratchPool[T]) Get(n int) []T {
	if n <= 0 {
		return nil
	}
	c := bits.Len(uint(n - 1)) // 1<<c >= n
	if b, ok := s.class[c].Get().(*[]T); ok {
		return (*b)[:n]
	}
	return make([]T, n, 1<<c)
}

// Put gives b back to the pool; its caller no longer uses it.
func (s *ScratchPool[T]) Put(b []T) {
	if cap(b) == 0 {
		return
	}
	c := bits.Len(uint(cap(b))) - 1 // 1<<c <= cap(b)
	b = b[:cap(b)]
	s.class[c].Put(&b)
}

var (
	ScratchF32 ScratchPool[float32]
	ScratchI8  ScratchPool[int8]
	ScratchI32 ScratchPool[int32]
	ScratchU16 ScratchPool[uint16]
	ScratchU64 ScratchPool[uint64]
)

// Grow returns s with n elements, its own array when that holds them (the
// values left in it), a new zeroed one otherwise.
func Grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
