//go:build !amd64 || amd64.v3

package graph

// mathUnfused: false where the compiler fuses multiply-adds in math
// (arm64, ppc64le, s390x, riscv64, and amd64 from GOAMD64=v3 on).
const mathUnfused = false
