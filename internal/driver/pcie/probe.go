package pcie

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
)

// Probe holds what the info ioctls returned for one device.
type Probe struct {
	Mgmt NodeProbe `json:"mgmt"`
	Ops  NodeProbe `json:"ops"`
}

// NodeProbe is the outcome of opening one node and querying it.
type NodeProbe struct {
	// Result is ok, absent, busy, resetting, not-initialised or error.
	Result string `json:"result"`
	// Error is the failing call and its error, when Result is not ok.
	Error string `json:"error,omitempty"`
	// State is the GET_DEVICE_STATE answer, "" when not read.
	State string `json:"state,omitempty"`
	// PCIName is the GET_PCIBUS_DEVICE_NAME answer.
	PCIName string `json:"pci_name,omitempty"`
	// SQCount is the number of submission queues (nil when not read).
	SQCount *uint16 `json:"sq_count,omitempty"`
	// P2PBitmap is the P2P DMA compatibility bitmap (ops only).
	P2PBitmap *uint64 `json:"p2p_bitmap,omitempty"`

	state  DeviceState
	config *DevConfig
	dram   *DRAMInfo
}

// Config returns the decoded dev_config, if this node returned one.
func (p NodeProbe) Config() (DevConfig, bool) {
	if p.config == nil {
		return DevConfig{}, false
	}
	return *p.config, true
}

// DRAM returns the decoded dram_info, if this node returned one.
func (p NodeProbe) DRAM() (DRAMInfo, bool) {
	if p.dram == nil {
		return DRAMInfo{}, false
	}
	return *p.dram, true
}

// probeDevice opens the mgmt node, then the ops node, each for as long as
// its ioctls take, and sets d.Probe, d.Props and the status.
func probeDevice(ctx context.Context, nodes Nodes, d *Device) {
	p := &Probe{}
	d.Probe = p
	if d.MgmtNode != "" {
		p.Mgmt = probeNode(ctx, nodes, d.MgmtNode, false, true)
	} else {
		p.Mgmt = NodeProbe{Result: NodeAbsent}
	}
	if d.OpsNode != "" {
		// The config comes from mgmt when it answered, so ops is held
		// only for what only it knows.
		p.Ops = probeNode(ctx, nodes, d.OpsNode, true, p.Mgmt.config == nil)
	} else {
		p.Ops = NodeProbe{Result: NodeAbsent}
	}

	cfg := p.Mgmt.config
	if cfg == nil {
		cfg = p.Ops.config
	}
	if cfg != nil {
		d.Props = cfg.Props()
	}
	if p.Ops.dram != nil {
		d.Props.MemoryBytes = p.Ops.dram.SizeBytes
		d.Props.DRAMBase = p.Ops.dram.Base
	}
	for _, n := range []NodeProbe{p.Mgmt, p.Ops} {
		if n.PCIName != "" && n.PCIName != d.BDF {
			d.Detail = joinDetail(d.Detail, fmt.Sprintf("the node answers for %s, not %s", n.PCIName, d.BDF))
		}
	}

	if d.Status == StatusRecovery {
		return
	}
	// The runtime (ggml-et) needs the ops node; mgmt only for management.
	ops, mgmt := p.Ops, p.Mgmt
	switch {
	case ops.Result == NodeBusy:
		d.Status, d.Detail = StatusBusy, joinDetail("ops node in use by another process", d.Detail)
	case ops.Result == NodeResetting || mgmt.Result == NodeResetting ||
		ops.state == StateResetInProgress || mgmt.state == StateResetInProgress:
		d.Status, d.Detail = StatusResetting, joinDetail("device is resetting", d.Detail)
	case ops.Result == NodeNotInitialised || ops.state == StateNotResponding:
		d.Status, d.Detail = StatusNotResponding, joinDetail("ops node not initialised or not responding", d.Detail)
	case ops.Result != NodeOK:
		d.Status, d.Detail = StatusError, joinDetail("ops: "+ops.Error, d.Detail)
	case ops.State != "" && !ops.state.Usable():
		d.Status, d.Detail = StatusNotResponding, joinDetail("state "+ops.State, d.Detail)
	}
	if mgmt.Result == NodeBusy {
		d.Detail = joinDetail(d.Detail, "mgmt node in use by another process")
	}
	if ops.state == StatePendingCommands {
		d.Detail = joinDetail(d.Detail, "pending commands")
	}
}

func joinDetail(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// probeNode opens one node, issues the info ioctls and closes it. ops
// selects the ops-only ioctls; withConfig asks for the configuration.
func probeNode(ctx context.Context, nodes Nodes, path string, ops, withConfig bool) NodeProbe {
	var p NodeProbe
	if err := ctx.Err(); err != nil {
		return NodeProbe{Result: NodeError, Error: err.Error()}
	}
	n, err := nodes.Open(path)
	if err != nil {
		return NodeProbe{Result: classify(err), Error: "open: " + err.Error()}
	}
	defer n.Close()

	// call issues one ioctl unless an earlier one failed; the first
	// failure decides the node's result.
	call := func(req uint32) ([]byte, bool) {
		if p.Result != "" {
			return nil, false
		}
		buf := make([]byte, argSize(req))
		if _, err := n.Ioctl(req, buf); err != nil {
			p.Result = classify(err)
			if p.Result == NodeAbsent || p.Result == NodeOK {
				p.Result = NodeError
			}
			p.Error = reqName(req) + ": " + err.Error()
			return nil, false
		}
		return buf, true
	}
	if b, ok := call(ReqGetDeviceState); ok {
		p.state = DeviceState(binary.LittleEndian.Uint32(b))
		p.State = p.state.String()
	}
	if b, ok := call(ReqGetPCIBusDeviceName); ok {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			b = b[:i]
		}
		p.PCIName = string(b)
	}
	if withConfig {
		if b, ok := call(ReqGetDeviceConfig); ok {
			c, _ := DecodeDevConfig(b)
			p.config = &c
		}
	}
	if b, ok := call(ReqGetSQCount); ok {
		v := binary.LittleEndian.Uint16(b)
		p.SQCount = &v
	}
	if ops {
		if b, ok := call(ReqGetUserDRAMInfo); ok {
			d, _ := DecodeDRAMInfo(b)
			p.dram = &d
		}
		// Optional: older drivers may not know this one.
		if p.Result == "" {
			b := make([]byte, 8)
			if _, err := n.Ioctl(ReqGetP2PDMACompatBitmap, b); err == nil {
				v := binary.LittleEndian.Uint64(b)
				p.P2PBitmap = &v
			}
		}
	}
	if p.Result == "" {
		p.Result = NodeOK
	}
	return p
}
