//go:build unix

package etrt

import "golang.org/x/sys/unix"

// setNonblock puts fd in non-blocking mode, so that os.NewFile puts it in
// the runtime's poller (a read on it can then be ended by closing it).
func setNonblock(fd int) { unix.SetNonblock(fd, true) }
