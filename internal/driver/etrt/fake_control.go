//go:build etrtfake && cgo

package etrt

/*
#include <stdlib.h>
#include "shim/etshim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// SetFakeFaults scripts the fake shim's faults (a comma-separated list;
// see shim/etshim.h): hang_open, open_fail, hang_wait, stream_error,
// load_fail, crash. "" clears them. Once called, the ETSHIM_FAKE_FAULT
// environment variable is ignored. Only in -tags etrtfake builds.
func SetFakeFaults(faults string) error {
	s := C.CString(faults)
	defer C.free(unsafe.Pointer(s))
	if C.et_fake_set_faults(s) != C.ET_OK {
		return fmt.Errorf("etrt: unknown fake fault in %q", faults)
	}
	return nil
}

// FakeLaunch is the fake shim's record of kernel launches since the last
// open: how many, and the last one's parameters.
type FakeLaunch struct {
	Count     uint64
	Kernel    int
	ShireMask uint64
	Barrier   bool
	FlushL3   bool
	ArgsBytes int
}

// FakeLaunches returns the fake shim's launch record. Only in -tags
// etrtfake builds.
func FakeLaunches() FakeLaunch {
	var (
		count, mask     C.uint64_t
		k, barrier, fl3 C.int
		args            C.size_t
	)
	C.et_fake_launches(&count, &k, &mask, &barrier, &fl3, &args)
	return FakeLaunch{Count: uint64(count), Kernel: int(k), ShireMask: uint64(mask),
		Barrier: barrier != 0, FlushL3: fl3 != 0, ArgsBytes: int(args)}
}
