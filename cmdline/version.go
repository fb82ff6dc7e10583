package cmdline

import "runtime/debug"

// Version is the version git-apex reports: set, when the build set it
// (-ldflags "-X main.version=..."), else the module's version go install
// recorded, else "dev".
func Version(set string) string {
	if set != "" {
		return set
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
