package pcie

import (
	"errors"
	"fmt"
	"syscall"
)

// Nodes opens ET device nodes for the info ioctls. OSNodes is the real one;
// Fake answers from canned values.
type Nodes interface {
	// Open opens a device node read-only and non-blocking.
	Open(path string) (Node, error)
}

// Node is one open device node.
type Node interface {
	// Ioctl issues a read ioctl; buf is the argument and has the size
	// encoded in req. It returns the ioctl's return value.
	Ioctl(req uint32, buf []byte) (int, error)
	Close() error
}

// Result of opening or querying one node, as reported in NodeProbe.Result.
const (
	NodeOK             = "ok"
	NodeAbsent         = "absent"
	NodeBusy           = "busy"
	NodeResetting      = "resetting"
	NodeNotInitialised = "not-initialised"
	NodeError          = "error"
)

// classify maps an errno from open or an ioctl to a NodeProbe result
// (reference §1.2 open semantics and §1.3 errors).
func classify(err error) string {
	switch {
	case err == nil:
		return NodeOK
	case errors.Is(err, syscall.ENOENT):
		return NodeAbsent
	case errors.Is(err, syscall.EBUSY):
		return NodeBusy
	case errors.Is(err, syscall.EPERM), errors.Is(err, errResetting):
		return NodeResetting
	case errors.Is(err, syscall.ENODEV):
		return NodeNotInitialised
	}
	return NodeError
}

// reqName names the ioctls et issues, for error messages.
func reqName(req uint32) string {
	switch req {
	case ReqGetUserDRAMInfo:
		return "GET_USER_DRAM_INFO"
	case ReqGetSQCount:
		return "GET_SQ_COUNT"
	case ReqGetSQMaxMsgSize:
		return "GET_SQ_MAX_MSG_SIZE"
	case ReqGetDeviceConfig:
		return "GET_DEVICE_CONFIGURATION"
	case ReqGetDeviceState:
		return "GET_DEVICE_STATE"
	case ReqGetPCIBusDeviceName:
		return "GET_PCIBUS_DEVICE_NAME"
	case ReqGetP2PDMACompatBitmap:
		return "GET_P2PDMA_DEVICE_COMPAT_BITMAP"
	}
	return fmt.Sprintf("ioctl %#x", req)
}
