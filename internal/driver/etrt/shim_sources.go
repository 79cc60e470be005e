//go:build (etrt || etrtfake) && cgo

package etrt

import "embed"

// shimSources embeds the C sources that cgo compiles through #include
// from shim/ (fakeshim.c, realshim.cpp). Nothing reads them: they are
// here so that the go command's build cache sees them. It keys a package
// on the files of its own directory, and a change to an included file
// elsewhere would otherwise reuse a stale build (a fake shim without the
// change, tests failing or passing for the wrong reason).
//
//go:embed shim/etshim.h shim/etshim_fake.c shim/etshim.cpp
var shimSources embed.FS
