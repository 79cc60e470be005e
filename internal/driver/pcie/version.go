package pcie

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a driver module version.
type Version struct{ Major, Minor, Patch int }

// MinDriverVersion is the oldest ET driver the runtime accepts
// (DevicePcie's kMinReqDriverVersion); the major version must also be 0.
var MinDriverVersion = Version{0, 15, 0}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Less orders versions.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	return v.Patch < w.Patch
}

// Supported reports whether the runtime accepts this driver version.
func (v Version) Supported() bool {
	return v.Major == MinDriverVersion.Major && !v.Less(MinDriverVersion)
}

// ParseVersion reads "MAJOR.MINOR[.PATCH]" with an optional suffix that
// starts with a character other than a digit or a dot ("0.20.0-dkms").
func ParseVersion(s string) (Version, error) {
	s = strings.TrimSpace(s)
	end := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
	core := s
	if end >= 0 {
		core = s[:end]
	}
	parts := strings.Split(core, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("driver version %q: want MAJOR.MINOR.PATCH", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("driver version %q: want MAJOR.MINOR.PATCH", s)
		}
		n[i] = v
	}
	return Version{n[0], n[1], n[2]}, nil
}
