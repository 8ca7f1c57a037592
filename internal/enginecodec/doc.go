// Package enginecodec owns the binary encodings of the engines' states,
// cmaes.State, selfcma.State, catcma's (catcma.go), sepcma's (sepcma.go)
// and the constraints' augmented Lagrangian (constraints.go): the only code
// that knows their layouts.
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
// As version 8 did when selfcma.State gained the signal-to-noise rule's
// Config.SNR, η, E and V (readSNR, migrateSNR):
//
//  1. selfcma.go: bump selfcmaVersion, name the version
//     (versionSNR = 8), add "8: 7" to esEncoding (it embeds cmaes's
//     unchanged encoding 7) and a sentence for version 8 to the list
//     above them: what it adds, what an older state decodes as.
//  2. encodeSelfCMA: write the new fields (version 8: after
//     AdaptRestarts; after the auxiliary CMA-ES is as good), with
//     no version check (the encoder writes only the current version), and
//     count them in AppendSelfCMA's size.
//  3. decodeSelfCMA: read them where they were written, under
//     "if version >= versionSNR"; else call a migration of their own in
//     migrate.go that sets what an ES of version 7 had (for a rule that
//     did not exist: its off state). selfcma.Restore checks them.
//  4. Fixtures: the fixtures of version 7 (testdata/selfcma/encoding7-*,
//     testdata/selfcma/upgrade) must still continue bit for bit; write one
//     of version 8 (selfcma_release_test.go: SELFCMA_WRITE_FIXTURES=1,
//     once, with the new version) and check it there. The fuzz target
//     FuzzDecodeSelfCMA and the round trips (roundtrip_test.go) cover the
//     new fields once the runs that the tests make use them.
//
// A field of cmaes.State is a version of cmaes's encoding (cmaes.go, the
// same steps in encodeCMAES and decodeCMAES) and, since selfcma embeds
// it, of selfcma's too (esEncoding maps the new selfcma version to the
// new cmaes one).
package enginecodec
