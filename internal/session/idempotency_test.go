package session_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// TestCreateIdempotent: a create sent again with its idempotency key
// answers the session the first made, as it is now, across a restart too;
// with other parameters it is refused; a key is checked, is not taken by a
// create that fails, and is freed by a delete.
func TestCreateIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	st := openStore(t, path)
	m := session.NewManager(st, session.Options{})
	p := session.CreateParams{X0: []float64{1, 2}, Sigma0: 0.5, Algorithm: session.AlgorithmCMAES, Metadata: []byte(`{"a": 1}`), IdempotencyKey: "run-7f3a"}

	first, created, err := m.CreateIdempotent(ctx, p)
	if err != nil || !created {
		t.Fatalf("first create: created %v, %v", created, err)
	}
	again, created, err := m.CreateIdempotent(ctx, p)
	if err != nil || created || !reflect.DeepEqual(again, first) {
		t.Fatalf("the same create again: created %v, %v, same session %v", created, err, reflect.DeepEqual(again, first))
	}
	// The drawn seed is the first create's; metadata's spacing does not count.
	p2 := p
	p2.Metadata = []byte(`{ "a" : 1 }`)
	if s, _, err := m.CreateIdempotent(ctx, p2); err != nil || s.ID != first.ID || s.Seed != first.Seed {
		t.Fatalf("with metadata spaced otherwise: %s, seed %d, %v", s.ID, s.Seed, err)
	}

	// After a tell, the create answers the session as it is now.
	b, _ := m.Ask(ctx, first.ID)
	told, err := m.Tell(ctx, first.ID, session.TellParams{Generation: 0, Fitness: fitness(b)})
	if err != nil {
		t.Fatal(err)
	}
	if s, created, err := m.CreateIdempotent(ctx, p); err != nil || s.ID != first.ID || s.Generation != 1 || created {
		t.Fatalf("after a tell: %s generation %d, %v (created %v)", s.ID, s.Generation, err, created)
	}

	// Other parameters with the key: refused, naming the session.
	other := p
	other.Sigma0 = 0.6
	_, _, err = m.CreateIdempotent(ctx, other)
	wantCode(t, err, session.CodeOutOfRange)
	if !strings.Contains(err.Error(), first.ID) {
		t.Errorf("the refusal does not name the session: %v", err)
	}

	// Bad keys, and bad parameters with a fresh key (which stays free).
	for _, key := range []string{strings.Repeat("k", session.MaxIdempotencyKey+1), "with space", "tab\t", "é"} {
		bad := p
		bad.IdempotencyKey = key
		_, _, err := m.CreateIdempotent(ctx, bad)
		wantCode(t, err, session.CodeInvalid)
	}
	bad := p
	bad.IdempotencyKey, bad.Sigma0 = "fresh", -1
	_, _, err = m.CreateIdempotent(ctx, bad)
	wantCode(t, err, session.CodeOutOfRange)
	bad.Metadata = []byte(`[1]`)
	bad.Sigma0 = 1
	_, _, err = m.CreateIdempotent(ctx, bad)
	wantCode(t, err, session.CodeOutOfRange)
	fresh := p
	fresh.IdempotencyKey = "fresh"
	if s, created, err := m.CreateIdempotent(ctx, fresh); err != nil || !created || s.ID == first.ID {
		t.Fatalf("a key a failed create carried: created %v, %v", created, err)
	}
	if s, created, err := m.CreateIdempotent(ctx, session.CreateParams{X0: []float64{1}, Sigma0: 1, IdempotencyKey: strings.Repeat("k", session.MaxIdempotencyKey)}); err != nil || !created || s.ID == "" {
		t.Fatalf("a key of the longest length: %v", err)
	}

	// Across a restart.
	st.Close()
	st = openStore(t, path)
	defer st.Close()
	m = session.NewManager(st, session.Options{})
	if s, created, err := m.CreateIdempotent(ctx, p); err != nil || created || !reflect.DeepEqual(s, told) {
		t.Fatalf("after a restart: created %v, %v, the session as told %v", created, err, reflect.DeepEqual(s, told))
	}

	// A delete frees the key.
	if err := m.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if s, created, err := m.CreateIdempotent(ctx, other); err != nil || !created || s.ID == first.ID {
		t.Fatalf("the key of a deleted session: created %v, %s, %v", created, s.ID, err)
	}
}

// Creates racing with one key make one session, which all of them answer.
func TestCreateIdempotentRacing(t *testing.T) {
	ctx := context.Background()
	m, _ := newManager(t)
	const n = 16
	ids := make([]string, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, c, err := m.CreateIdempotent(ctx, session.CreateParams{X0: []float64{1, 2, 3}, Sigma0: 1, IdempotencyKey: "race"})
			if err != nil {
				t.Error(err)
			}
			ids[i], created[i] = s.ID, c
		})
	}
	wg.Wait()
	made := 0
	for i := range n {
		if ids[i] != ids[0] {
			t.Fatalf("creates with one key answered sessions %s and %s", ids[0], ids[i])
		}
		if created[i] {
			made++
		}
	}
	list, err := m.List(ctx, "", 0)
	if err != nil || len(list) != 1 || made != 1 {
		t.Fatalf("%d sessions listed, %d answers say created (want 1 and 1), %v", len(list), made, err)
	}
}
