package pcie

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ainekko/et/internal/driver"
)

// TestIoctlNumbers pins the request numbers to the table of reference
// et-driver-and-sysemu.md §1.3 (computed there from et_ioctl.h on x86-64).
func TestIoctlNumbers(t *testing.T) {
	tests := []struct {
		name string
		got  uint32
		want uint32
	}{
		{"GET_USER_DRAM_INFO", ReqGetUserDRAMInfo, 0x8018E701},
		{"GET_SQ_COUNT", ReqGetSQCount, 0x8002E703},
		{"GET_SQ_MAX_MSG_SIZE", ReqGetSQMaxMsgSize, 0x8002E704},
		{"GET_DEVICE_CONFIGURATION", ReqGetDeviceConfig, 0x8020E705},
		{"GET_DEVICE_STATE", ReqGetDeviceState, 0x8004E70D},
		{"GET_PCIBUS_DEVICE_NAME(32)", ReqGetPCIBusDeviceName, 0x8020E70E},
		{"GET_P2PDMA_DEVICE_COMPAT_BITMAP", ReqGetP2PDMACompatBitmap, 0x8008E70F},
		// Write ioctls et never issues, to check the _IOC direction bits.
		{"FW_UPDATE", ioc(iocWrite, ioctlMagic, 2, 16), 0x4010E702},
		{"SET_SQ_THRESHOLD", ioc(iocWrite, ioctlMagic, 10, 4), 0x4004E70A},
		{"POP_CQ", ioc(iocRead|iocWrite, ioctlMagic, 7, 16), 0xC010E707},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("request = %#x, want %#x", tt.got, tt.want)
			}
		})
	}
	if got := argSize(ReqGetUserDRAMInfo); got != 24 {
		t.Errorf("argSize(GET_USER_DRAM_INFO) = %d, want 24", got)
	}
}

func TestDecodeDevConfig(t *testing.T) {
	// Bytes laid out by hand from the offsets of reference §1.3.
	b := make([]byte, 32)
	binary.LittleEndian.PutUint32(b[0:], 32768)       // total_l3_size
	binary.LittleEndian.PutUint32(b[4:], 16384)       // total_l2_size
	binary.LittleEndian.PutUint32(b[8:], 81920)       // total_scp_size
	binary.LittleEndian.PutUint32(b[12:], 128000)     // ddr_bandwidth
	binary.LittleEndian.PutUint32(b[16:], 1100)       // minion_boot_freq
	binary.LittleEndian.PutUint32(b[20:], 0x7FFFFFFF) // cm_shire_mask
	copy(b[24:], []byte{1, 75, 64, 4, 32, 0, 3, 0xAA})
	c, err := DecodeDevConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	want := DevConfig{
		TotalL3KB: 32768, TotalL2KB: 16384, TotalScratchKB: 81920, DDRBandwidthMBps: 128000,
		MinionBootMHz: 1100, CMShireMask: 0x7FFFFFFF, FormFactor: 1, TDPW: 75, CacheLineBytes: 64,
		NumL2CacheBanks: 4, SyncMinShireID: 32, ArchRev: 0, Devnum: 3,
	}
	if c != want {
		t.Errorf("decoded %+v\nwant    %+v", c, want)
	}
	enc := c.Encode()
	enc[31] = 0xAA // padding is not decoded
	if string(enc) != string(b) {
		t.Errorf("Encode round trip = %x, want %x", enc, b)
	}
	p := c.Props()
	wantP := driver.Props{
		FrequencyMHz: 1100, ComputeShireMask: 0x7FFFFFFF, AvailableShires: 31, CacheLineBytes: 64,
		L2Bytes: 16 << 20, L3Bytes: 32 << 20, ScratchpadBytes: 80 << 20, MemoryBandwidthMBps: 128000,
		L2CacheBanks: 4, SpareShireID: 32, Arch: "etsoc1", FormFactor: "pcie", TDPW: 75,
	}
	if p != wantP {
		t.Errorf("Props = %+v\nwant    %+v", p, wantP)
	}
	if _, err := DecodeDevConfig(b[:31]); err == nil {
		t.Error("DecodeDevConfig(31 bytes) succeeded")
	}
}

func TestDecodeDRAMInfo(t *testing.T) {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint64(b[0:], 0x8005801000)
	binary.LittleEndian.PutUint64(b[8:], 0x7FA600000)
	binary.LittleEndian.PutUint32(b[16:], 128<<20)
	binary.LittleEndian.PutUint16(b[20:], 8)
	binary.LittleEndian.PutUint16(b[22:], 64)
	d, err := DecodeDRAMInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	want := DRAMInfo{Base: 0x8005801000, SizeBytes: 0x7FA600000, DMAMaxElemBytes: 128 << 20, DMAMaxElemCount: 8, AlignInBits: 64}
	if d != want {
		t.Errorf("decoded %+v, want %+v", d, want)
	}
	if string(d.Encode()) != string(b) {
		t.Errorf("Encode round trip = %x, want %x", d.Encode(), b)
	}
	if _, err := DecodeDRAMInfo(b[:23]); err == nil {
		t.Error("DecodeDRAMInfo(23 bytes) succeeded")
	}
}

func TestDeviceState(t *testing.T) {
	tests := []struct {
		s      DeviceState
		name   string
		usable bool
	}{
		{StateNotReady, "not-ready", false},
		{StateReady, "ready", true},
		{StateResetInProgress, "reset-in-progress", false},
		{StateNotResponding, "not-responding", false},
		{StatePendingCommands, "pending-commands", true},
		{9, "unknown(9)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.s.String() != tt.name || tt.s.Usable() != tt.usable {
				t.Errorf("%d: %q usable=%v, want %q %v", tt.s, tt.s, tt.s.Usable(), tt.name, tt.usable)
			}
		})
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in        string
		want      Version
		supported bool
		err       bool
	}{
		{in: "0.20.0", want: Version{0, 20, 0}, supported: true},
		{in: "0.15.0\n", want: Version{0, 15, 0}, supported: true},
		{in: "0.14.9", want: Version{0, 14, 9}},
		{in: "1.0.0", want: Version{1, 0, 0}},
		{in: "0.16", want: Version{0, 16, 0}, supported: true},
		{in: "0.20.0-dkms", want: Version{0, 20, 0}, supported: true},
		{in: "", err: true},
		{in: "abc", err: true},
		{in: "0", err: true},
		{in: "0.1.2.3", err: true},
		{in: "0..1", err: true},
		{in: "99999999999999999999.0", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ParseVersion(tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("ParseVersion(%q) error = %v, want error %v", tt.in, err, tt.err)
			}
			if err != nil {
				return
			}
			if v != tt.want || v.Supported() != tt.supported {
				t.Errorf("ParseVersion(%q) = %v supported=%v, want %v %v", tt.in, v, v.Supported(), tt.want, tt.supported)
			}
		})
	}
}

func TestParseCounters(t *testing.T) {
	tests := []struct {
		name, file, text string
		want             []Counter
	}{
		{"lines", "err_stats/ce_count", "DramCeEvent: 0\nMinionCeEvent: 2\n",
			[]Counter{{"err_stats/ce_count", "DramCeEvent", 0, "count"}, {"err_stats/ce_count", "MinionCeEvent", 2, "count"}}},
		{"single MB", "mem_stats/cma_allocated", "12 MB\n", []Counter{{"mem_stats/cma_allocated", "", 12 << 20, "bytes"}}},
		{"rate", "mem_stats/cma_allocation_rate", "3 MB/sec", []Counter{{"mem_stats/cma_allocation_rate", "", 3 << 20, "bytes_per_s"}}},
		{"raw bytes", "mem_stats/cma_allocated", "4096\n", []Counter{{"mem_stats/cma_allocated", "", 4096, "count"}}},
		{"padded", "ops_vq_stats/msg_count", "HpSQ0:                    7 msg(s)\nSQ0:   12 msg(s)\n\n",
			[]Counter{{"ops_vq_stats/msg_count", "HpSQ0", 7, "msgs"}, {"ops_vq_stats/msg_count", "SQ0", 12, "msgs"}}},
		{"units", "x", "A: 1 B\nB: 2 B/sec\nC: 3 msg(s)/sec\nD:  40 %\n",
			[]Counter{{"x", "A", 1, "bytes"}, {"x", "B", 2, "bytes_per_s"}, {"x", "C", 3, "msgs_per_s"}, {"x", "D", 40, "percent"}}},
		{"empty", "x", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCounters(tt.file, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("[%d] = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseCountersError(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"no value", "SQ0:\n", "f:1: bad counter value"},
		{"not a number", "ok\nSQ0: x msg(s)\n", "f:1: bad counter value \"ok\""},
		{"bad line 2", "SQ0: 1\nSQ1: -1\n", "f:2: bad counter value \"-1\""},
		{"unit", "SQ0: 1 parsecs\n", "f:1: unknown unit \"parsecs\""},
		{"name", "a b: 1\n", "f:1: bad counter name"},
		{"empty name", ": 1\n", "f:1: bad counter name"},
		{"overflow", "18446744073709551615 MB\n", "f:1: counter value 18446744073709551615 MB overflows"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCounters("f", tt.text)
			var ce *CounterError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v, want *CounterError", err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %q, want prefix %q", err, tt.want)
			}
		})
	}
}

func FuzzParseCounters(f *testing.F) {
	files, _ := filepath.Glob("testdata/sysfs/*/sys/bus/pci/devices/*/*_stats/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("SQ0: 1 %\n: 2\n3 MB/sec")
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := ParseCounters("f", s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		for _, c := range cs {
			if c.Unit == "" {
				t.Errorf("counter without unit: %+v", c)
			}
		}
	})
}

// scanJSON renders a Result for golden files, with the temporary roots
// replaced by $SYS and $DEV.
func scanJSON(t *testing.T, res Result, sysRoot, devRoot string) []byte {
	t.Helper()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), devRoot, "$DEV")
	s = strings.ReplaceAll(s, sysRoot, "$SYS")
	return []byte(s + "\n")
}

func TestScan(t *testing.T) {
	tests := []struct {
		scenario string
		statuses []Status
	}{
		{"bound", []Status{StatusReady}},
		{"no-driver", []Status{StatusNoDriver, StatusNoDriver}},
		{"recovery", []Status{StatusRecovery}},
		{"two-devices", []Status{StatusReady, StatusReady}},
		{"old-driver", []Status{StatusOldDriver}},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			sys, dev := fixture(t, tt.scenario)
			fake := &Fake{}
			res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: fake})
			if err != nil {
				t.Fatal(err)
			}
			var got []Status
			for _, d := range res.Devices {
				got = append(got, d.Status)
			}
			if strings.Join(statusStrings(got), ",") != strings.Join(statusStrings(tt.statuses), ",") {
				t.Errorf("statuses = %v, want %v", got, tt.statuses)
			}
			if len(fake.Opened) != 0 {
				t.Errorf("opened %v without --probe", fake.Opened)
			}
			golden(t, "TestScan/"+tt.scenario, scanJSON(t, res, sys, dev))
		})
	}
}

func statusStrings(ss []Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

func TestScanNoBus(t *testing.T) {
	res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: t.TempDir()}, DevRoot: t.TempDir(), Nodes: &Fake{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Devices) != 0 || len(res.Warnings) != 0 || !res.NoBus {
		t.Errorf("Scan of an empty root = %+v", res)
	}
}

func TestScanWarnings(t *testing.T) {
	t.Run("devnum gap", func(t *testing.T) {
		sys, dev := fixture(t, "two-devices")
		os.WriteFile(filepath.Join(sys, "bus/pci/devices/0000:41:00.0/devnum"), []byte("2\n"), 0o644)
		os.Rename(filepath.Join(dev, "et1_mgmt"), filepath.Join(dev, "et2_mgmt"))
		os.Rename(filepath.Join(dev, "et1_ops"), filepath.Join(dev, "et2_ops"))
		res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "not contiguous from 0 (0, 2)") {
			t.Errorf("warnings = %q", res.Warnings)
		}
		if res.Devices[1].Devnum != 2 || res.Devices[1].Status != StatusReady {
			t.Errorf("device 2 = %+v", res.Devices[1])
		}
	})
	t.Run("recovery", func(t *testing.T) {
		sys, dev := fixture(t, "recovery")
		res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "1 et*_mgmt but 0 et*_ops") {
			t.Errorf("warnings = %q", res.Warnings)
		}
	})
	t.Run("bad counters", func(t *testing.T) {
		sys, dev := fixture(t, "bound")
		os.WriteFile(filepath.Join(sys, "bus/pci/devices/0000:01:00.0/mem_stats/cma_allocated"), []byte("lots\n"), 0o644)
		res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
		if err != nil {
			t.Fatal(err)
		}
		want := `0000:01:00.0: mem_stats/cma_allocated:1: bad counter value "lots"`
		if len(res.Warnings) != 1 || res.Warnings[0] != want {
			t.Errorf("warnings = %q, want %q", res.Warnings, want)
		}
		if res.Devices[0].Status != StatusReady {
			t.Errorf("status = %s, want ready", res.Devices[0].Status)
		}
	})
	t.Run("no nodes", func(t *testing.T) {
		sys, _ := fixture(t, "bound")
		res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: t.TempDir(), Nodes: &Fake{}})
		if err != nil {
			t.Fatal(err)
		}
		if d := res.Devices[0]; d.Status != StatusNoNodes || !strings.Contains(d.Detail, "--device=/dev/et0_mgmt") {
			t.Errorf("device = %s %q", d.Status, d.Detail)
		}
	})
	t.Run("version from /sys/module", func(t *testing.T) {
		sys, dev := fixture(t, "bound")
		os.Remove(filepath.Join(sys, "bus/pci/drivers/ET/module"))
		os.WriteFile(filepath.Join(sys, "module/et_soc1/version"), []byte("0.16.1\n"), 0o644)
		res, _ := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
		if d := res.Devices[0]; d.DriverVersion != "0.16.1" || d.Status != StatusReady {
			t.Errorf("device = %s %q %q", d.Status, d.DriverVersion, d.Detail)
		}
	})
	t.Run("version unknown", func(t *testing.T) {
		sys, dev := fixture(t, "bound")
		os.RemoveAll(filepath.Join(sys, "module"))
		res, _ := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
		if d := res.Devices[0]; d.Status != StatusOldDriver || !strings.Contains(d.Detail, "version unknown") {
			t.Errorf("device = %s %q", d.Status, d.Detail)
		}
	})
	t.Run("no devnum", func(t *testing.T) {
		sys, dev := fixture(t, "bound")
		os.Remove(filepath.Join(sys, "bus/pci/devices/0000:01:00.0/devnum"))
		res, _ := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}})
		if d := res.Devices[0]; d.Status != StatusNoDevnum || d.Devnum != -1 {
			t.Errorf("device = %s devnum %d", d.Status, d.Devnum)
		}
	})
}

// goodNode is a healthy node as a real ET-SoC-1 answers.
func goodNode(bdf string) *FakeNode {
	return &FakeNode{
		State:   StateReady,
		PCIName: bdf,
		SQCount: 4,
		Config: DevConfig{TotalL3KB: 32768, TotalL2KB: 16384, TotalScratchKB: 81920, DDRBandwidthMBps: 128000,
			MinionBootMHz: 1000, CMShireMask: 0xFFFFFFFF, FormFactor: 1, TDPW: 75, CacheLineBytes: 64,
			NumL2CacheBanks: 4, SyncMinShireID: 32},
		DRAM: DRAMInfo{Base: 0x8005801000, SizeBytes: 0x7FA600000, DMAMaxElemBytes: 128 << 20, DMAMaxElemCount: 8, AlignInBits: 64},
		P2P:  1,
	}
}

func TestScanProbe(t *testing.T) {
	const bdf = "0000:01:00.0"
	tests := []struct {
		name       string
		scenario   string
		mgmt, ops  func(*FakeNode)
		status     Status
		detail     string
		wantMemory uint64
		wantFreq   uint32
	}{
		{name: "ready", scenario: "bound", status: StatusReady, wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "pending commands", scenario: "bound", ops: func(n *FakeNode) { n.State = StatePendingCommands },
			status: StatusReady, detail: "pending commands", wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "ops busy", scenario: "bound", ops: func(n *FakeNode) { n.OpenErr = syscall.EBUSY },
			status: StatusBusy, detail: "ops node in use by another process", wantFreq: 1000},
		{name: "mgmt busy", scenario: "bound", mgmt: func(n *FakeNode) { n.OpenErr = syscall.EBUSY },
			status: StatusReady, detail: "mgmt node in use by another process", wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "open EPERM", scenario: "bound", mgmt: func(n *FakeNode) { n.OpenErr = syscall.EPERM }, ops: func(n *FakeNode) { n.OpenErr = syscall.EPERM },
			status: StatusResetting, detail: "device is resetting"},
		{name: "ioctl EUCLEAN", scenario: "bound", ops: func(n *FakeNode) { n.Errs = map[uint32]error{ReqGetUserDRAMInfo: errResetting} },
			status: StatusResetting, wantFreq: 1000},
		{name: "state reset", scenario: "bound", mgmt: func(n *FakeNode) { n.State = StateResetInProgress },
			status: StatusResetting, wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "ENODEV", scenario: "bound", ops: func(n *FakeNode) { n.Errs = map[uint32]error{ReqGetSQCount: syscall.ENODEV} },
			status: StatusNotResponding, wantFreq: 1000},
		{name: "state not responding", scenario: "bound", ops: func(n *FakeNode) { n.State = StateNotResponding },
			status: StatusNotResponding, wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "other error", scenario: "bound", ops: func(n *FakeNode) { n.OpenErr = syscall.EACCES },
			status: StatusError, detail: "ops: open: permission denied", wantFreq: 1000},
		{name: "wrong name", scenario: "bound", mgmt: func(n *FakeNode) { n.PCIName = "0000:02:00.0" },
			status: StatusReady, detail: "the node answers for 0000:02:00.0, not 0000:01:00.0", wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "config from ops", scenario: "bound", mgmt: func(n *FakeNode) { n.Errs = map[uint32]error{ReqGetDeviceConfig: syscall.EIO} },
			status: StatusReady, wantMemory: 0x7FA600000, wantFreq: 1000},
		{name: "recovery", scenario: "recovery", status: StatusRecovery, wantFreq: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys, dev := fixture(t, tt.scenario)
			mgmt, ops := goodNode(bdf), goodNode(bdf)
			if tt.mgmt != nil {
				tt.mgmt(mgmt)
			}
			if tt.ops != nil {
				tt.ops(ops)
			}
			fake := &Fake{Nodes: map[string]*FakeNode{
				filepath.Join(dev, "et0_mgmt"): mgmt,
				filepath.Join(dev, "et0_ops"):  ops,
			}}
			res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Probe: true, Nodes: fake})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Devices[0]
			if d.Status != tt.status {
				t.Errorf("status = %s (%s), want %s", d.Status, d.Detail, tt.status)
			}
			if tt.detail != "" && !strings.Contains(d.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to contain %q", d.Detail, tt.detail)
			}
			if d.Props.MemoryBytes != tt.wantMemory || d.Props.FrequencyMHz != tt.wantFreq {
				t.Errorf("memory %d freq %d, want %d %d", d.Props.MemoryBytes, d.Props.FrequencyMHz, tt.wantMemory, tt.wantFreq)
			}
			if fake.OpenNow != 0 || fake.MaxOpen > 1 {
				t.Errorf("nodes open after probe %d, at most at once %d; want 0 and 1", fake.OpenNow, fake.MaxOpen)
			}
			if d.Probe == nil {
				t.Fatal("no probe result")
			}
		})
	}
}

func TestProbeGolden(t *testing.T) {
	sys, dev := fixture(t, "two-devices")
	n0, n1 := goodNode("0000:01:00.0"), goodNode("0000:41:00.0")
	busy := &FakeNode{OpenErr: syscall.EBUSY}
	fake := &Fake{Nodes: map[string]*FakeNode{
		filepath.Join(dev, "et0_mgmt"): n0, filepath.Join(dev, "et0_ops"): n0,
		filepath.Join(dev, "et1_mgmt"): n1, filepath.Join(dev, "et1_ops"): busy,
	}}
	res, err := Scan(context.Background(), Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Probe: true, Nodes: fake})
	if err != nil {
		t.Fatal(err)
	}
	wantOpened := []string{"et0_mgmt", "et0_ops", "et1_mgmt"}
	if len(fake.Opened) != len(wantOpened) {
		t.Fatalf("opened %v, want %v", fake.Opened, wantOpened)
	}
	for i, p := range fake.Opened {
		if filepath.Base(p) != wantOpened[i] {
			t.Errorf("open %d = %s, want %s", i, p, wantOpened[i])
		}
	}
	golden(t, "TestProbeGolden", scanJSON(t, res, sys, dev))
}

func TestScanCanceled(t *testing.T) {
	sys, dev := fixture(t, "two-devices")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scan(ctx, Options{Sysfs: driver.Sysfs{Root: sys}, DevRoot: dev, Nodes: &Fake{}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Scan with a canceled context: %v", err)
	}
}

func TestFakeNode(t *testing.T) {
	f := &Fake{Nodes: map[string]*FakeNode{"/d/et0_mgmt": {PCIName: strings.Repeat("x", 32)}}}
	if _, err := f.Open("/d/et9_mgmt"); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("open of a missing node: %v", err)
	}
	n, err := f.Open("/d/et0_mgmt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Ioctl(ReqGetPCIBusDeviceName, make([]byte, PCINameSize)); !errors.Is(err, syscall.ENOMEM) {
		t.Errorf("name longer than the buffer: %v, want ENOMEM", err)
	}
	if _, err := n.Ioctl(ReqGetUserDRAMInfo, make([]byte, 24)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("DRAM info on mgmt: %v, want EINVAL", err)
	}
	n.Close()
	if err := n.Close(); err == nil {
		t.Error("second Close succeeded")
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"0.20.0", "0.14.2\n", "1.2", "0.20.0-dkms", "..", "9999999999999999999999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Patch < 0 {
			t.Errorf("ParseVersion(%q) = %v", s, v)
		}
		if w, err := ParseVersion(v.String()); err != nil || w != v {
			t.Errorf("round trip of %v: %v, %v", v, w, err)
		}
	})
}
