package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// salvageReport is what salvageable found in a damaged file.
type salvageReport struct {
	read, histRead int                // sessions and history entries session.Check read
	sound          []string           // the sessions that read soundly, in order
	lost           map[string][]error // the others, with why
	unlisted       []string           // lost ids named in the file without a readable record
	noKey          map[string]error   // sound sessions whose idempotency key cannot be kept, with why
}

func (r *salvageReport) lostIDs() []string { return slices.Sorted(maps.Keys(r.lost)) }

// salvageable reads every session of d as -check does (session.Check: the
// record and the optimizer state decode and agree, the history is one entry
// per generation told), and sorts them into sound and lost. A panic while
// reading is a problem of the file, not a crash.
func salvageable(ctx context.Context, d *bolt.Damaged) (r salvageReport) {
	r.lost, r.noKey = map[string][]error{}, map[string]error{}
	for _, id := range d.Lost() {
		r.lost[id] = append(r.lost[id], errors.New("its record cannot be read"))
		r.unlisted = append(r.unlisted, id)
	}
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() {
			if p := recover(); p != nil {
				r.lost[""] = append(r.lost[""], fmt.Errorf("reading the sessions failed: %v", p))
			}
		}()
		n, err := session.Check(ctx, d, func(id string, err error) { r.lost[id] = append(r.lost[id], err) })
		r.read, r.histRead = n.Sessions, n.HistoryEntries
		if err != nil {
			r.lost[""] = append(r.lost[""], fmt.Errorf("reading the sessions failed: %w", err))
		}
	}()
	for after := ""; ; {
		recs, _ := d.List(ctx, after, 1000)
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			if _, bad := r.lost[rec.ID]; bad {
				continue
			}
			r.sound = append(r.sound, rec.ID)
			if _, _, err := d.KeyOf(ctx, rec.ID); err != nil {
				r.noKey[rec.ID] = err
			}
		}
		after = recs[len(recs)-1].ID
	}
	return r
}

// joinErrs is errs on one line.
func joinErrs(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// earlierLayout reports whether l is the version of an earlier layout than
// those whose sessions salvage reads.
func earlierLayout(l string) bool {
	n, err := strconv.Atoi(l)
	return err == nil && n >= 1 && n < bolt.SalvageFrom
}

// salvagedLayout reports whether salvage reads the sessions of layout l.
func salvagedLayout(l string) bool {
	n, err := strconv.Atoi(l)
	return err == nil && n >= bolt.SalvageFrom && n <= bolt.SchemaVersion
}

// salvage writes the sessions of the file at path that read soundly,
// byte for byte, to a new file at outPath (-salvage -out), prints those it
// could not and why, and checks the new file as -check does. It fails only
// when it could not write a sound new file; sessions lost are listed, not
// an error.
func salvage(ctx context.Context, path, outPath string, out io.Writer) error {
	if outPath == "" {
		return errors.New("-salvage writes a new file: give its name with -out")
	}
	d, err := bolt.OpenDamaged(path)
	if err != nil {
		return err
	}
	defer d.Close()
	switch l := d.Layout(); {
	case earlierLayout(l):
		return fmt.Errorf("%s is of layout %s: salvage reads layouts %d to %d only", path, l, bolt.SalvageFrom, bolt.SchemaVersion)
	case !salvagedLayout(l):
		fmt.Fprintf(out, "note: the layout version cannot be read (%q): the file is read as layout %d\n", l, bolt.SchemaVersion)
	}
	for _, n := range d.Notes() {
		fmt.Fprintln(out, "note:", n)
	}
	for _, p := range d.Problems() {
		fmt.Fprintln(out, "file:", p)
	}
	r := salvageable(ctx, d)
	for _, id := range r.lostIDs() {
		name := "session " + id
		if id == "" {
			name = "sessions"
		}
		fmt.Fprintf(out, "lost %s: %v\n", name, joinErrs(r.lost[id]))
	}
	for _, id := range slices.Sorted(maps.Keys(r.noKey)) {
		fmt.Fprintf(out, "session %s: salvaged without its idempotency key: %v\n", id, r.noKey[id])
	}
	n, err := bolt.Salvage(ctx, d, r.sound, func(id string) bool { return r.noKey[id] == nil }, outPath)
	if err != nil {
		return err
	}
	lost := len(r.lost)
	if _, ok := r.lost[""]; ok {
		lost--
	}
	fmt.Fprintf(out, "salvaged %d sessions (history entries %d, idempotency keys %d) of %s into %s; lost %d sessions\n",
		n.Sessions, n.HistoryEntries, n.Keys, path, outPath, lost)
	if err := check(ctx, outPath, io.Discard); err != nil {
		return fmt.Errorf("the salvaged file does not pass -check: %w", err)
	}
	fmt.Fprintf(out, "%s passes -check: serve it with -db %s\n", outPath, outPath)
	return nil
}
