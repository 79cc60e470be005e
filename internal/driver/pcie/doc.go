// Package pcie discovers ET-SoC-1 PCIe devices without the C++ runtime: it
// scans sysfs for the ET PCI ids, reads the ET driver's attributes and
// counters, checks the /dev/etN_mgmt and /dev/etN_ops nodes, and, on
// request, opens the nodes read-only for the info ioctls of the ET driver
// (reference et-driver-and-sysemu.md §1), closing each node before the next.
//
// Hardware seams: sysfs is read through driver.Sysfs (a root directory), and
// device nodes through the Nodes interface, whose Linux implementation
// issues real ioctls and whose Fake answers from canned values in tests.
//
// pcie imports only internal/driver, the standard library and
// golang.org/x/sys/unix. It never prints and never exits.
package pcie
