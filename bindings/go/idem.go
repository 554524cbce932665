// SPDX-License-Identifier: MIT

// Package idem puts the idem SQLite extension (the idempotency protocol
// for writes: doc/contract.md) into every SQLite connection that this
// process opens after Register: a go-dqlite node's (github.com/canonical/
// go-dqlite/app, through libdqlite) and mattn/go-sqlite3's alike, as long
// as they link the same libsqlite3 (Debian's packages all do).
//
//	func main() {
//		if err := idem.Register(); err != nil { ... }   // first thing in main
//		node, err := app.New(dir, app.WithAddress(addr), ...)
//		...
//	}
//
// Call Register from main, not from an init function: go-dqlite's own
// init configures SQLite's threading mode, which SQLite refuses once it is
// initialized, and Register initializes it.
//
// The package compiles idem's C sources into itself: idem_amalgamation.h
// is ext/idem.c with its parts inlined, made by amalgamate.sh (go generate
// in this directory, or make go at the top of the repository). A
// connection whose database lives in dqlite's VFS gets idem built for a
// replicated engine (see idem_replicated.c); any other gets the local
// build, with the full durability check of an external claim.
package idem

/*
#cgo LDFLAGS: -lm
int idemGoRegister(void);
*/
import "C"

import (
	"errors"
	"fmt"
)

//go:generate sh amalgamate.sh

// ErrNoSQLite: Register found no SQLite linked into the binary.  Import a
// driver that carries one (github.com/mattn/go-sqlite3, or
// github.com/canonical/go-dqlite), in the same binary.
var ErrNoSQLite = errors.New("idem: this binary links no SQLite: import a driver that does" +
	" (github.com/mattn/go-sqlite3, or github.com/canonical/go-dqlite's app or driver)")

// Register makes every SQLite connection opened afterwards in this
// process have idem's functions (idem_key, idem_canonical, idem_header,
// idem_version, idem_versioned) and its module (CREATE VIRTUAL TABLE calls
// USING idem). Connections already open are not changed. Calling it again
// does nothing.
func Register() error {
	switch rc := C.idemGoRegister(); rc {
	case 0:
		return nil
	case -1:
		return ErrNoSQLite
	default:
		return fmt.Errorf("idem: sqlite3_auto_extension failed (SQLite result code %d)", int(rc))
	}
}
