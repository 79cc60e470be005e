package pcie

import (
	"fmt"
	"strings"
	"syscall"
)

// Fake is a Nodes that answers the info ioctls from canned values, for
// tests. It records opens and closes so a test can check that no node is
// held after a probe and that at most one is open at a time.
type Fake struct {
	// Nodes maps a node path to its canned answers; a missing path gives
	// ENOENT.
	Nodes map[string]*FakeNode
	// Opened lists the paths opened, in order.
	Opened []string
	// OpenNow and MaxOpen count the nodes open now and at most at once.
	OpenNow, MaxOpen int
}

// FakeNode is one fake device node. The zero value is a ready node that
// answers zeros.
type FakeNode struct {
	// OpenErr is returned by Open (EBUSY, EPERM, ...).
	OpenErr error
	// Errs are returned by the ioctls they are keyed by.
	Errs    map[uint32]error
	State   DeviceState
	PCIName string
	Config  DevConfig
	DRAM    DRAMInfo
	SQCount uint16
	P2P     uint64
}

// Open implements Nodes.
func (f *Fake) Open(path string) (Node, error) {
	n, ok := f.Nodes[path]
	if !ok {
		return nil, syscall.ENOENT
	}
	if n.OpenErr != nil {
		return nil, n.OpenErr
	}
	f.Opened = append(f.Opened, path)
	f.OpenNow++
	f.MaxOpen = max(f.MaxOpen, f.OpenNow)
	return &fakeOpen{f: f, n: n, ops: strings.HasSuffix(path, "_ops")}, nil
}

type fakeOpen struct {
	f      *Fake
	n      *FakeNode
	ops    bool
	closed bool
}

func (o *fakeOpen) Ioctl(req uint32, buf []byte) (int, error) {
	if o.closed {
		return 0, syscall.EBADF
	}
	if len(buf) != argSize(req) {
		return 0, fmt.Errorf("fake: %s: buffer of %d bytes, want %d", reqName(req), len(buf), argSize(req))
	}
	if err := o.n.Errs[req]; err != nil {
		return 0, err
	}
	var src []byte
	switch req {
	case ReqGetDeviceState:
		src = le32(uint32(o.n.State))
	case ReqGetPCIBusDeviceName:
		if len(o.n.PCIName)+1 > len(buf) {
			return 0, syscall.ENOMEM
		}
		src = append([]byte(o.n.PCIName), 0)
	case ReqGetDeviceConfig:
		src = o.n.Config.Encode()
	case ReqGetSQCount:
		src = []byte{byte(o.n.SQCount), byte(o.n.SQCount >> 8)}
	case ReqGetUserDRAMInfo:
		if !o.ops {
			return 0, syscall.EINVAL
		}
		src = o.n.DRAM.Encode()
	case ReqGetP2PDMACompatBitmap:
		if !o.ops {
			return 0, syscall.EINVAL
		}
		src = le32(uint32(o.n.P2P))
		src = append(src, le32(uint32(o.n.P2P>>32))...)
	default:
		return 0, syscall.EINVAL
	}
	copy(buf, src)
	return len(src), nil
}

func (o *fakeOpen) Close() error {
	if o.closed {
		return syscall.EBADF
	}
	o.closed = true
	o.f.OpenNow--
	return nil
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }
