package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	bolt "go.etcd.io/bbolt"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func put(t *testing.T, s *Store, rec session.Record, hist *session.HistoryEntry) uint64 {
	t.Helper()
	v, err := s.Put(context.Background(), rec, hist)
	if err != nil {
		t.Fatalf("Put(%s, version %d): %v", rec.ID, rec.Version, err)
	}
	return v
}

func TestPutGetReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)

	v := put(t, s, session.Record{ID: "a", Meta: []byte("m0"), State: []byte("s0")}, nil)
	if v != 1 {
		t.Fatalf("new version = %d, want 1", v)
	}
	v = put(t, s, session.Record{ID: "a", Version: 1, Meta: []byte("m1"), State: []byte("s1")},
		&session.HistoryEntry{Generation: 0, Data: []byte("h0")})
	if v != 2 {
		t.Fatalf("version = %d, want 2", v)
	}
	put(t, s, session.Record{ID: "b", Meta: []byte("mb"), State: []byte("sb")}, nil)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = open(t, path)
	defer s.Close()
	got, err := s.Get(ctx, "a")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	want := session.Record{ID: "a", Version: 2, Meta: []byte("m1"), State: []byte("s1")}
	if got.ID != want.ID || got.Version != want.Version || !bytes.Equal(got.Meta, want.Meta) || !bytes.Equal(got.State, want.State) {
		t.Errorf("Get after reopen = %+v, want %+v", got, want)
	}
	h, err := s.History(ctx, "a", 0, 0)
	if err != nil || len(h) != 1 || h[0].Generation != 0 || string(h[0].Data) != "h0" {
		t.Errorf("History = %+v, %v; want one entry h0", h, err)
	}
	list, err := s.List(ctx, "", 0)
	if err != nil || len(list) != 2 || list[0].ID != "a" || list[1].ID != "b" || list[0].State != nil || string(list[1].Meta) != "mb" {
		t.Errorf("List = %+v, %v", list, err)
	}
	list, err = s.List(ctx, "a", 1)
	if err != nil || len(list) != 1 || list[0].ID != "b" {
		t.Errorf("List after a = %+v, %v", list, err)
	}
}

func TestConflicts(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	put(t, s, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil)

	tests := []struct {
		name string
		rec  session.Record
		want error
	}{
		{"create existing", session.Record{ID: "a"}, session.ErrVersion},
		{"stale version", session.Record{ID: "a", Version: 7}, session.ErrVersion},
		{"unknown id", session.Record{ID: "zz", Version: 1}, session.ErrNoRecord},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Put(ctx, tc.rec, &session.HistoryEntry{Generation: 3, Data: []byte("x")})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Put error = %v, want %v", err, tc.want)
			}
		})
	}
	if h, _ := s.History(ctx, "a", 0, 0); len(h) != 0 {
		t.Errorf("a failed put wrote history %+v", h)
	}
	if got, _ := s.Get(ctx, "a"); got.Version != 1 || string(got.Meta) != "m" {
		t.Errorf("a failed put changed the record: %+v", got)
	}
	if _, err := s.Get(ctx, "zz"); !errors.Is(err, session.ErrNoRecord) {
		t.Errorf("Get unknown: %v, want ErrNoRecord", err)
	}
	if err := s.Delete(ctx, "a", 2); !errors.Is(err, session.ErrVersion) {
		t.Errorf("Delete stale: %v, want ErrVersion", err)
	}
	if err := s.Delete(ctx, "zz", 1); !errors.Is(err, session.ErrNoRecord) {
		t.Errorf("Delete unknown: %v, want ErrNoRecord", err)
	}
}

func TestHistoryAndDelete(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	v := put(t, s, session.Record{ID: "a", State: []byte("s")}, nil)
	for g := range uint64(300) {
		v = put(t, s, session.Record{ID: "a", Version: v, State: []byte("s")},
			&session.HistoryEntry{Generation: g, Data: fmt.Appendf(nil, "g%d", g)})
	}
	h, err := s.History(ctx, "a", 256, 3)
	if err != nil || len(h) != 3 || h[0].Generation != 256 || string(h[2].Data) != "g258" {
		t.Fatalf("History(from 256, limit 3) = %+v, %v", h, err)
	}
	if err := s.Delete(ctx, "a", v); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if h, _ := s.History(ctx, "a", 0, 0); len(h) != 0 {
		t.Errorf("history survived delete: %d entries", len(h))
	}
	// The id can be created again, from scratch.
	if v := put(t, s, session.Record{ID: "a", State: []byte("s")}, nil); v != 1 {
		t.Errorf("recreated version = %d, want 1", v)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := Open(path, nil); err == nil {
		s.Close()
		t.Fatal("Open of a file of layout 99 succeeded")
	}
}

// Concurrent writes to many records all land, each exactly once, and the
// group commit puts several in one transaction.
func TestConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	const sessions, gens = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i := range sessions {
		wg.Go(func() {
			id := fmt.Sprintf("s%02d", i)
			v, err := s.Put(ctx, session.Record{ID: id, State: []byte{0}}, nil)
			for g := uint64(0); err == nil && g < gens; g++ {
				v, err = s.Put(ctx, session.Record{ID: id, Version: v, State: []byte{byte(g + 1)}},
					&session.HistoryEntry{Generation: g, Data: []byte{byte(g)}})
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c, w := s.commits.Load(), int64(sessions*(gens+1)); c >= w {
		t.Errorf("%d commits for %d concurrent writes: no group commit", c, w)
	}
	s.Close()
	s = open(t, path)
	defer s.Close()
	for i := range sessions {
		id := fmt.Sprintf("s%02d", i)
		rec, err := s.Get(ctx, id)
		if err != nil || rec.Version != gens+1 || rec.State[0] != gens {
			t.Errorf("%s: %+v, %v", id, rec, err)
		}
		if h, _ := s.History(ctx, id, 0, 0); len(h) != gens {
			t.Errorf("%s: %d history entries, want %d", id, len(h), gens)
		}
	}
}

func TestClosed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	s.Close()
	if _, err := s.Put(context.Background(), session.Record{ID: "a"}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
}
