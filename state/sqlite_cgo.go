//go:build cgo

package state

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// classify says what a SQLite error means to the store.
func classify(err error) sqliteFault {
	var serr sqlite3.Error
	if err == nil || !errors.As(err, &serr) {
		return otherFault
	}
	switch {
	case serr.Code == sqlite3.ErrCorrupt || serr.Code == sqlite3.ErrNotADB:
		return damagedFault
	case serr.Code == sqlite3.ErrBusy || serr.Code == sqlite3.ErrLocked:
		return busyFault
	case serr.ExtendedCode == sqlite3.ErrConstraintUnique:
		return uniqueFault
	}
	return otherFault
}
