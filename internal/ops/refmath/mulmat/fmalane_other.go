//go:build !arm64

package mulmat

// fmaLane is fmaF32: x·y + z rounded once (see fmalane_arm64.go).
func fmaLane(x, y, z float32) float32 { return fmaF32(x, y, z) }
