// Package driver defines how et reaches an ET-SoC-1 device: the Device
// interface (a Go mirror of the subset of rt::IRuntime that the tools use),
// device properties, and the typed errors that every backend returns at the
// hardware boundary.
//
// Backends live in sub-packages: ref (the built-in reference device), pcie
// (sysfs discovery and read-only ioctls) and etrt (the real runtime, cgo).
//
// driver imports only the standard library. It never prints and never exits.
package driver
