package session_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// A Manager over a bbolt store runs the ask/tell loop of a session: every
// tell is committed before it returns, so the loop may stop anywhere and
// go on later, in another process, from the session's id.
func ExampleManager() {
	dir, err := os.MkdirTemp("", "selfcma-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := bolt.Open(filepath.Join(dir, "sessions.db"), &bolt.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	m := session.NewManager(st, session.Options{})
	ctx := context.Background()

	seed, target := uint64(42), 1e-8
	s, err := m.Create(ctx, session.CreateParams{
		X0: []float64{1, 1, 1, 1}, Sigma0: 0.5, Seed: &seed,
		Algorithm:   session.AlgorithmCMAES,
		Termination: session.Termination{TargetFitness: &target},
	})
	if err != nil {
		log.Fatal(err)
	}
	for s.Status == session.StatusRunning {
		b, err := m.Ask(ctx, s.ID) // the same batch until it is told
		if err != nil {
			log.Fatal(err)
		}
		f := make([]float64, len(b.Candidates))
		for i, x := range b.Candidates {
			for _, v := range x {
				f[i] += v * v // the sphere
			}
		}
		if s, err = m.Tell(ctx, s.ID, session.TellParams{Generation: b.Generation, Fitness: f}); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("stopped on", s.StopReasons[0].Name, "at generation", s.Generation)
	fmt.Println("best f below the target:", s.Best.F <= target)
	// Output:
	// stopped on target_fitness at generation 55
	// best f below the target: true
}
