// Package ref is the reference device: a software model of an ET-SoC-1 as
// the ggml ET kernels see it, always available, needing no hardware and no
// ET install.
//
// It owns:
//   - device memory: a sparse 32 GiB address space starting at the fake
//     device's DRAM base (driver.FakeProps), with 64-byte (cache line)
//     aligned allocations whose Go memory is allocated on first touch;
//   - kernels by name: every kernel of the ABI manifest's kernel map can be
//     loaded; a launch decodes the params bytes with ops/abi exactly as the
//     kernel ELF reads them (device ggml_tensor copies with device
//     addresses, trailing scalars at their offsets), reads the inputs from
//     device memory through data and nb, runs the reference math of
//     internal/ops and writes the result back into device memory, so a
//     wrong params encoding gives a wrong result or a fault here too
//     (kernelTable in kernels.go; opKernels in kernels_ops.go for the
//     kernels that are one catalog op each);
//   - launch replays: a kernel that is one op on tensors of device memory
//     (the one-op kernels and el_map_f32) keeps, with its decoded params
//     in a cache keyed by kernel name and params bytes, the resolved
//     launch (op, tensors, normalized params, cost); a launch of the same
//     bytes while no allocation was made or freed runs that op again
//     without decoding or resolving anything, and still records the
//     decoded params for the run's ABI check (replay in kernels.go);
//   - the uberkernel: its instruction records and params blob are read
//     from device memory and dispatched by kernel id;
//   - kernel faults: a kernel that rejects its params, reads or writes
//     outside any allocation, or has no reference math does not fail the
//     launch; like the ET runtime it is reported by Sync as a
//     driver.StreamError. A panic of the reference math on the launching
//     goroutine becomes a stream error too; the reference math's worker
//     goroutines cannot be recovered, so params are checked (bounds,
//     shapes, types) before the math runs;
//   - a timing model: every launch gets simulated device cycles (see
//     Cycles), recorded by Launches for runtime-format traces.
//
// ref imports only internal/driver, internal/ops, internal/ops/abi and the
// standard library. It never prints and never exits.
package ref
