// Package upgrade holds no code: its tests open a database file and the
// session states written by an earlier version of the server (commit
// b8986da, store layout 4) with the current code, and check that every
// session continues bit for bit. See upgrade_test.go.
package upgrade
