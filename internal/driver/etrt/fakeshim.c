//go:build etrtfake && cgo

// The fake shim, compiled into the package with -tags etrtfake.
#include "shim/etshim_fake.c"
