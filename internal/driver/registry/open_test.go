package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ainekko/et/internal/driver"
	"github.com/ainekko/et/internal/driver/etrt"
)

func TestOpenRef(t *testing.T) {
	h, err := Open(context.Background(), Spec{Backend: "ref"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Device.Info().Kind != driver.KindRef || h.RunDir != "" || h.Temp {
		t.Errorf("handle %+v, info %+v", h, h.Device.Info())
	}
	if kept := h.Close(); kept != "" {
		t.Errorf("kept %q", kept)
	}
	if _, err := Open(context.Background(), Spec{Backend: "ref", Index: 1}); !errors.Is(err, driver.ErrNoDevice) {
		t.Errorf("ref 1: %v, want ErrNoDevice", err)
	}
	if _, err := Open(context.Background(), Spec{Backend: "gpu"}); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Errorf("gpu: %v", err)
	}
}

func TestNativeAvailable(t *testing.T) {
	for _, b := range Backends {
		native := b == "sysemu" || b == "pcie"
		if Native(b) != native {
			t.Errorf("Native(%s) = %v", b, Native(b))
		}
		err := Available(b)
		if want := native && !etrt.Built; (err != nil) != want || (err != nil && !errors.Is(err, driver.ErrNotBuilt)) {
			t.Errorf("Available(%s) = %v (built %v)", b, err, etrt.Built)
		}
	}
	d, err := OpenInProcess(context.Background(), etrt.OpenRequest{Backend: "ref"})
	if err != nil || d.Info().Kind != driver.KindRef {
		t.Fatalf("in process ref: %v", err)
	}
	d.Close()
}
