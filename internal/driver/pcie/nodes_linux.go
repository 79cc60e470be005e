//go:build linux && (amd64 || arm64 || riscv64)

package pcie

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OSNodes opens real device nodes with O_RDONLY|O_NONBLOCK|O_CLOEXEC. It
// refuses anything that is not a character device, so a stray file never
// receives an ioctl.
func OSNodes() Nodes { return osNodes{} }

type osNodes struct{}

func (osNodes) Open(path string) (Node, error) {
	var fd int
	var err error
	for {
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR {
		unix.Close(fd)
		return nil, fmt.Errorf("%s is not a character device", path)
	}
	return &osNode{fd: fd}, nil
}

type osNode struct{ fd int }

func (n *osNode) Ioctl(req uint32, buf []byte) (int, error) {
	if len(buf) == 0 || len(buf) != argSize(req) {
		return 0, fmt.Errorf("%s: buffer of %d bytes, want %d", reqName(req), len(buf), argSize(req))
	}
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(n.fd), uintptr(req), uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

func (n *osNode) Close() error { return unix.Close(n.fd) }
