//go:build !arm64

package refmath

// fmaLane is fmaF32: x·y + z rounded once (see fmalane_arm64.go).
func fmaLane(x, y, z float32) float32 { return fmaF32(x, y, z) }
