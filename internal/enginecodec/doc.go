// Package enginecodec owns the binary encodings of the engines' states,
// cmaes.State and selfcma.State: the only code that knows their layouts.
// The engines keep their state as plain data and restore from it
// (cmaes.Restore, selfcma.Restore); this package writes the current
// version of that data and reads every version written since the first,
// so that a session persisted by any release continues bit for bit.
//
// An encoding is binenc's: a tag, a schema version, the fields in a fixed
// order, a CRC-32. The encoder writes only the current version. The
// decoder reads each version into the current State: a field an older
// version wrote in another layout is read in that layout where it is read
// (a version check in the part that reads it), and what an older version
// did not write at all is set by a migration of its own (migrate.go), as
// the ES of that version had it. The derived parts of a State (B and D
// from C, the pending batch from the random stream, a kept Step's C_μ, a
// primary's C from the kept Step) are left out when the reader can
// recompute them bit for bit, and then recomputed: B, D and the batch by
// the engine's Restore, the others here.
//
// # Adding a version
//
// To add fields to selfcma.State (or cmaes.State):
//
//  1. Bump selfcmaVersion (cmaesVersion) and add a line for the new version
//     to the list above it: what it adds, and what an older state decodes
//     as.
//  2. Write the new fields in the encoder (selfcma.go: encodeSelfCMA), at
//     the end of its block, with no version check: the encoder writes only
//     the current version.
//  3. Read them in the decoder under "if version >= versionX", and give the
//     older versions their values in a migration (migrate.go) called where
//     they would have been read.
//  4. Keep the fixtures: a state written by the previous version
//     (testdata/selfcma/encodingN-*.state, written once by that version's
//     code and never again) must still continue bit for bit
//     (release_test.go); add one of the new version beside them.
//
// A selfcma version embeds the cmaes encoding of the same or an earlier
// version (esEncoding): a change of cmaes.State bumps both.
package enginecodec
