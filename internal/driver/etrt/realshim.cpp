//go:build etrt && !etrtfake && !etshimlib && cgo

// The real shim, compiled into the package with -tags etrt. It needs the ET
// runtime headers and libraries through CGO_CXXFLAGS and CGO_LDFLAGS (see
// docs/etrt.md); with -tags etrt,etshimlib a prebuilt libetshim is linked
// instead.
#include "shim/etshim.cpp"
