package driver

import "testing"

// TestSysemuProps checks the expected sysemu values of reference
// et-driver-and-sysemu.md §2.1.
func TestSysemuProps(t *testing.T) {
	p := SysemuProps()
	if p.MemoryBytes != 17085497344 || p.DRAMBase != 0x8005801000 || p.FrequencyMHz != 1000 ||
		p.ComputeShireMask != 0xFFFFFFFF || p.AvailableShires != 32 {
		t.Errorf("SysemuProps = %+v", p)
	}
	tests := []struct{ ddr, want uint64 }{
		{16 << 30, 0x3FA600000},
		{32 << 30, 0x7FA600000},
		{0x5801000, 0},
		{0, 0},
	}
	for _, tt := range tests {
		if got := SysemuDRAMBytes(tt.ddr); got != tt.want {
			t.Errorf("SysemuDRAMBytes(%#x) = %#x, want %#x", tt.ddr, got, tt.want)
		}
	}
}
