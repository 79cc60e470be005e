// Package etrt is the real-runtime backend of et: sysemu and PCIe devices
// driven through the ET runtime (rt::IRuntime over dev::IDeviceLayer).
//
// It owns:
//   - the C ABI of the runtime shim (shim/etshim.h), its real C++
//     implementation (shim/etshim.cpp, built only with -tags etrt against
//     an ET install, see docs/etrt.md) and an in-memory fake of the same ABI
//     (shim/etshim_fake.c, built with -tags etrtfake, for CI);
//   - the cgo binding of that ABI as a driver.Device (etrt_cgo.go); without
//     either tag, or without cgo, opening it returns driver.ErrNotBuilt;
//   - decoding of stream errors: DeviceErrorCode names and per-hart error
//     contexts (errors.go);
//   - the runtime's own profiler as a driver.Profiler (profile.go and the
//     shim's et_profiler_start/stop): the trace the runtime writes, as
//     ggml-et's GGML_ET_PROFILE starts it;
//   - the worker: because a native call can block forever (sys_emu waits
//     for its firmware with no timeout), the runtime lives in a child
//     process (et re-executing itself as "et __worker"). Serve runs in the
//     child and serves a driver.Device over a gob protocol on two pipes;
//     OpenWorker, in the parent, starts the child and returns a proxy
//     driver.Device that enforces deadlines (killing the child's process
//     group and returning driver.ErrTimeout with the tails of sysemu.log
//     and the UART logs), forwards interrupts, reports the child's death
//     (naming the native abort's own message, not the Go crash dump that
//     follows it: crash.go), and never leaves it behind.
//
// etrt imports only internal/driver, internal/sysemu and the standard
// library. It never prints and never exits.
package etrt
