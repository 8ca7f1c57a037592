package session

import (
	"context"
	"errors"
	"fmt"
)

// CheckCounts is what Check read.
type CheckCounts struct {
	Sessions       int
	HistoryEntries int
}

// checkPage is how many sessions, and history entries, Check reads at a
// time.
const checkPage = 1000

// Check reads every session of st as a restart of the server would, and
// calls problem, with the session's id, for each fault it finds:
//   - the record does not decode, or is of another id;
//   - the optimizer state does not decode;
//   - the record's summary (dimension, λ, status, generation, evaluations,
//     best f) is not the state's;
//   - the last tell is not of the generation before the pending one, or the
//     held values are not of the pending generation's candidates;
//   - the history is not one entry for each generation told, 0 to g−1,
//     each decoding to its own generation.
//
// It returns an error only when st cannot be read on. The store's own
// structure (bolt.Store.Check for bbolt) is not its to check.
func Check(ctx context.Context, st Store, problem func(id string, err error)) (CheckCounts, error) {
	var n CheckCounts
	for after := ""; ; {
		recs, err := st.List(ctx, after, checkPage)
		if err != nil {
			return n, err
		}
		if len(recs) == 0 {
			return n, nil
		}
		for _, r := range recs {
			report := func(format string, args ...any) { problem(r.ID, fmt.Errorf(format, args...)) }
			n.Sessions++
			g, err := checkRecord(ctx, st, r.ID, report)
			if err != nil {
				return n, err
			}
			h, err := checkHistory(ctx, st, r.ID, g, report)
			n.HistoryEntries += h
			if err != nil {
				return n, err
			}
		}
		after = recs[len(recs)-1].ID
	}
}

// checkRecord checks the record of id and returns the number of generations
// told, -1 when the record does not tell it.
func checkRecord(ctx context.Context, st Store, id string, report func(string, ...any)) (int, error) {
	rec, err := st.Get(ctx, id)
	var de *DamagedError
	if errors.As(err, &de) { // a record the store cannot give whole: that session's problem only
		report("%s", de.What)
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	md, err := decodeMeta(rec.Meta)
	if err != nil {
		report("%v", err)
		return -1, nil
	}
	if md.ID != id {
		report("the record is of session %q", md.ID)
	}
	o, err := decodeOptimizer(md.Algorithm, rec.State)
	if err != nil {
		report("optimizer state: %v", err)
		return md.Generation, nil
	}
	if md.StopRequested { // a stop written as the meta only, as a load applies it
		o.StopNow()
	}
	if err := checkConstrained(md); err != nil {
		report("constraints: %v", err)
	}
	want := *md
	want.summarize(o)
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"dimension", md.Dimension, want.Dimension},
		{"population size", md.PopulationSize, want.PopulationSize},
		{"status", md.Status, want.Status},
		{"generation", md.Generation, want.Generation},
		{"evaluations", md.Evaluations, want.Evaluations},
		{"best f", fmtBest(md.BestF), fmtBest(want.BestF)},
	} {
		if f.got != f.want {
			report("the record says %s %v, the optimizer state %v", f.name, f.got, f.want)
		}
	}
	cur := o.Status()
	g := cur.Generation
	if lt := md.LastTell; lt != nil && lt.Generation != g-1 {
		report("the last tell is of generation %d, the pending one is %d", lt.Generation, g)
	}
	if p := md.Partial; p != nil {
		lambda := cur.Params.Lambda
		switch {
		case p.Generation != g:
			report("values held for generation %d, the pending one is %d", p.Generation, g)
		case len(p.Indices) > 0 && (p.Indices[0] < 0 || p.Indices[len(p.Indices)-1] >= lambda):
			report("values held for candidates %v of %d", p.Indices, lambda)
		}
	}
	return g, nil
}

func fmtBest(f *float64) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprint(*f)
}

// checkHistory checks that the history of id is generations 0 to told−1
// (told < 0: whatever it holds, in order) and returns how many entries it
// read.
func checkHistory(ctx context.Context, st Store, id string, told int, report func(string, ...any)) (int, error) {
	read, next, past := 0, uint64(0), int64(-1) // past: the first generation not told
	for {
		ents, err := st.History(ctx, id, next, checkPage)
		if err != nil {
			return read, err
		}
		for _, e := range ents {
			read++
			if e.Generation != next {
				report("history: generations %d to %d are missing", next, e.Generation-1)
			}
			if told >= 0 && e.Generation >= uint64(told) && past < 0 {
				past = int64(e.Generation)
			}
			h, err := decodeHistory(e.Data)
			switch {
			case err != nil:
				report("history: generation %d: %v", e.Generation, err)
			case uint64(h.Generation) != e.Generation:
				report("history: the entry of generation %d says generation %d", e.Generation, h.Generation)
			}
			next = e.Generation + 1
		}
		if len(ents) < checkPage {
			break
		}
	}
	switch {
	case past >= 0:
		report("history: entries of generations %d to %d, after the %d told", past, next-1, told)
	case told >= 0 && next < uint64(told):
		report("history: generations %d to %d are missing", next, told-1)
	}
	return read, nil
}
