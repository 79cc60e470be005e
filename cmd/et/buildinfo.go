package main

import (
	"runtime"
	"runtime/debug"

	"github.com/ainekko/et/internal/driver/registry"
	"github.com/ainekko/et/internal/ops/abi"
)

func goVersion() string { return runtime.Version() }

// versionDoc is et version's document (schema et.version/v1): what a bug
// report needs to name the build.
type versionDoc struct {
	Schema string `json:"schema"`
	versionInfo
}

// versionInfo is et version's row.
type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	// Commit is the git commit et was built from (Go's build info
	// vcs.revision; "" when built without VCS stamping).
	Commit string `json:"commit"`
	// Modified: the work tree had changes (vcs.modified).
	Modified bool `json:"modified"`
	// GGMLCommit and GGML are the built-in ABI manifest's ggml commit and
	// description: the ggml version et plans for.
	GGMLCommit string `json:"ggml_commit"`
	GGML       string `json:"ggml"`
	// Etrt: the ET runtime (the sysemu and pcie backends) is built in.
	Etrt bool `json:"etrt"`
}

// csvTables is et version's raw CSV form: one row.
func (d versionDoc) csvTables() []csvTable { return []csvTable{{Rows: []versionInfo{d.versionInfo}}} }

// newVersionDoc gathers the version from bi (Go's build info; nil when
// the binary has none), the built-in ABI manifest and the backends.
func newVersionDoc(bi *debug.BuildInfo) versionDoc {
	m := abi.Default()
	d := versionDoc{Schema: "et.version/v1", versionInfo: versionInfo{Version: version, Go: goVersion(),
		GGMLCommit: m.GGMLCommit(), GGML: m.GGMLDescribe(), Etrt: registry.Available("sysemu") == nil}}
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				d.Commit = s.Value
			case "vcs.modified":
				d.Modified = s.Value == "true"
			}
		}
	}
	return d
}

// readBuildInfo is debug.ReadBuildInfo (nil without build info).
func readBuildInfo() *debug.BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return bi
}
