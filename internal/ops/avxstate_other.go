//go:build !(goexperiment.simd && amd64)

package ops

// ClearUpper does nothing: without GOEXPERIMENT=simd the runtime saves
// and restores only the SSE registers on preemption, so the upper halves
// of the vector registers stay clean.
func ClearUpper() {}
