package session_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// fault is what faultStore does to the next Put.
type fault int

const (
	noFault    fault = iota
	failBefore       // the write fails and nothing is written (a full disk)
	failAfter        // the write lands but is reported failed (an fsync error, a lost answer)
)

var errInjected = errors.New("injected store fault")

// faultStore is a session.Store that fails the next Put as told.
type faultStore struct {
	session.Store
	mu   sync.Mutex
	next fault
}

func (s *faultStore) arm(f fault) { s.mu.Lock(); s.next = f; s.mu.Unlock() }

func (s *faultStore) Put(ctx context.Context, rec session.Record, h *session.HistoryEntry) (uint64, error) {
	s.mu.Lock()
	f := s.next
	s.next = noFault
	s.mu.Unlock()
	if f == failBefore {
		return 0, errInjected
	}
	v, err := s.Store.Put(ctx, rec, h)
	if f == failAfter && err == nil {
		return 0, errInjected
	}
	return v, err
}

// TestStoreFaults: a tell whose write fails answers an internal error and
// loses nothing. When nothing was written the session is as before the
// tell (same object, same pending batch) and the tell, sent again, is
// applied; when the write landed, the tell sent again is a retry and is
// not applied twice. Either way the run goes on exactly as one without
// faults: the same batches, bit for bit, and one history record per
// generation.
func TestStoreFaults(t *testing.T) {
	ctx := context.Background()
	const gens = 24
	faults := map[int]fault{2: failBefore, 3: failAfter, 7: failAfter, 8: failBefore, 9: failBefore, 15: failAfter}
	for _, alg := range []string{session.AlgorithmCMAES, session.AlgorithmSelfCMAES, session.AlgorithmSepCMAES} {
		t.Run(alg, func(t *testing.T) {
			params := session.CreateParams{X0: []float64{1, -2, 0.5, 3}, Sigma0: 0.7, Algorithm: alg, PopulationSize: 12, Seed: seed(11)}
			run := func(inject bool) ([]session.Batch, []session.HistoryRecord) {
				st := &faultStore{Store: openStore(t, filepath.Join(t.TempDir(), "s.db"))}
				m := session.NewManager(st, session.Options{})
				s, err := m.Create(ctx, params)
				if err != nil {
					t.Fatal(err)
				}
				var batches []session.Batch
				for g := range gens {
					b, err := m.Ask(ctx, s.ID)
					if err != nil {
						t.Fatal(err)
					}
					batches = append(batches, b)
					tell := session.TellParams{Generation: b.Generation, Fitness: fitness(b)}
					f := faults[g]
					if inject && f != noFault {
						before, _ := m.Get(ctx, s.ID)
						st.arm(f)
						_, err := m.Tell(ctx, s.ID, tell)
						wantCode(t, err, session.CodeInternal)
						after, err := m.Get(ctx, s.ID)
						if err != nil {
							t.Fatal(err)
						}
						again, err := m.Ask(ctx, s.ID)
						switch f {
						case failBefore:
							if !reflect.DeepEqual(after, before) || err != nil || !reflect.DeepEqual(again, b) {
								t.Fatalf("generation %d: a write that failed changed the session (generation %d → %d) or the batch", g, before.Generation, after.Generation)
							}
						case failAfter:
							if after.Generation != g+1 || err != nil || again.Generation != g+1 {
								t.Fatalf("generation %d: a write that landed is not seen: generation %d, ask %d, %v", g, after.Generation, again.Generation, err)
							}
						}
					}
					got, err := m.Tell(ctx, s.ID, tell) // the client sends it (again)
					if err != nil || got.Generation != g+1 {
						t.Fatalf("generation %d: tell: generation %d, %v", g, got.Generation, err)
					}
				}
				h, err := m.History(ctx, s.ID, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				return batches, h
			}
			wantB, wantH := run(false)
			gotB, gotH := run(true)
			if !reflect.DeepEqual(gotB, wantB) {
				t.Error("with store faults the batches differ from the run without")
			}
			if len(gotH) != gens {
				t.Fatalf("%d history records, want %d", len(gotH), gens)
			}
			for i := range gotH {
				if !reflect.DeepEqual(gotH[i], wantH[i]) {
					t.Errorf("history record %d differs:\n got %+v\nwant %+v", i, gotH[i], wantH[i])
				}
			}
		})
	}
}
