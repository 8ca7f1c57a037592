package session_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// fullStore is a session.Store whose writes fail with err, writing nothing,
// while full is set: a full disk.
type fullStore struct {
	session.Store
	mu   sync.Mutex
	full error
}

func (s *fullStore) fill(err error) { s.mu.Lock(); s.full = err; s.mu.Unlock() }

func (s *fullStore) Put(ctx context.Context, rec session.Record, h *session.HistoryEntry) (uint64, error) {
	s.mu.Lock()
	err := s.full
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return s.Store.Put(ctx, rec, h)
}

// TestStorageFull: a write that fails for lack of space is storage_full
// (not internal) for create, tell and stop, whatever the error's form (a
// wrapped ENOSPC, EDQUOT or EFBIG, one flattened to text by bbolt, or
// ErrStorageFull of another store); the session stays as it was, and the
// same requests, once space is freed, apply once.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	for _, full := range []error{
		&os.PathError{Op: "write", Path: "s.db", Err: syscall.ENOSPC},
		fmt.Errorf("put: %w", &os.PathError{Op: "write", Path: "s.db", Err: syscall.EDQUOT}),
		&os.PathError{Op: "write", Path: "s.db", Err: syscall.EFBIG},
		errors.New("file resize error: " + syscall.ENOSPC.Error()),
		fmt.Errorf("postgres: %w", session.ErrStorageFull),
	} {
		t.Run(full.Error(), func(t *testing.T) {
			st := &fullStore{Store: openStore(t, filepath.Join(t.TempDir(), "s.db"))}
			m := session.NewManager(st, session.Options{})
			params := session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, PopulationSize: 6, Seed: seed(3)}
			st.fill(full)
			_, err := m.Create(ctx, params)
			wantCode(t, err, session.CodeStorageFull)
			st.fill(nil)
			s, err := m.Create(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			b, err := m.Ask(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			tell := session.TellParams{Generation: b.Generation, Fitness: fitness(b)}
			st.fill(full)
			_, err = m.Tell(ctx, s.ID, tell)
			wantCode(t, err, session.CodeStorageFull)
			if got, _ := m.Get(ctx, s.ID); !reflect.DeepEqual(got, s) {
				t.Errorf("after a full disk: %+v, want %+v", got, s)
			}
			if again, err := m.Ask(ctx, s.ID); err != nil || !reflect.DeepEqual(again, b) {
				t.Errorf("the batch after a full disk differs: %v", err)
			}
			_, err = m.Stop(ctx, s.ID)
			wantCode(t, err, session.CodeStorageFull)
			st.fill(nil)
			got, err := m.Tell(ctx, s.ID, tell)
			if err != nil || got.Generation != 1 || got.Evaluations != 6 {
				t.Fatalf("the tell sent again: generation %d, evaluations %d, %v", got.Generation, got.Evaluations, err)
			}
			if h, err := m.History(ctx, s.ID, 0, 0); err != nil || len(h) != 1 {
				t.Errorf("history of %d generations, %v, want 1", len(h), err)
			}
			if got, err := m.Stop(ctx, s.ID); err != nil || got.Status != "stopped" {
				t.Errorf("stop sent again: %+v, %v", got, err)
			}
		})
	}
	// Other failures stay internal.
	st := &fullStore{Store: openStore(t, filepath.Join(t.TempDir(), "s.db"))}
	m := session.NewManager(st, session.Options{})
	st.fill(&os.PathError{Op: "write", Path: "s.db", Err: syscall.EIO})
	_, err := m.Create(ctx, session.CreateParams{X0: []float64{1, 2}, Sigma0: 1})
	wantCode(t, err, session.CodeInternal)
}
