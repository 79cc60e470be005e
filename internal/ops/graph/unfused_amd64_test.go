//go:build !amd64.v3

package graph

// mathUnfused: Go's math is compiled without fused multiply-adds, as the
// Box-Muller kernel is (amd64 below GOAMD64=v3).
const mathUnfused = true
