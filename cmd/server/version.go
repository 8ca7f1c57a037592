package main

import "runtime/debug"

// version describes the build: the main module's version (since Go 1.24 a
// binary built from a git checkout has a pseudo-version naming the commit,
// "+dirty" with uncommitted changes; "(devel)" without version control
// stamping, then the commit if one is stamped) and Go's version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "(devel)"
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v += " " + s.Value[:min(12, len(s.Value))]
			}
		}
	}
	return v + " " + bi.GoVersion
}
