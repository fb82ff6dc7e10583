//go:build !cgo

package state

// classify says what a SQLite error means to the store. Without cgo the
// driver cannot open a database at all (it says so), so there is no
// SQLite error to tell apart: this build exists to check that git-apex
// compiles for other systems.
func classify(error) sqliteFault { return otherFault }
