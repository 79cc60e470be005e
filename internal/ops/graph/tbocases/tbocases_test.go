package tbocases

import "testing"

func TestAll(t *testing.T) {
	cs, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 19726 {
		t.Errorf("%d cases, want test-backend-ops' 19,726", len(cs))
	}
	if cs[0].String() != "ABS(type=f16,ne_a=[128,2,2,2],v=0)" {
		t.Errorf("first case %s", cs[0])
	}
	ops := map[string]int{}
	for _, c := range cs {
		ops[c.Op]++
	}
	if ops["MUL_MAT"] != 1562 || ops["FLASH_ATTN_EXT"] != 5158 {
		t.Errorf("MUL_MAT %d FLASH_ATTN_EXT %d, want 1562 and 5158", ops["MUL_MAT"], ops["FLASH_ATTN_EXT"])
	}
}
