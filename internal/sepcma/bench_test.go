package sepcma

import (
	"fmt"
	"testing"
)

// BenchmarkGeneration times one generation at the default λ: Ask (the λ
// points copied out, as a session hands them), the sphere evaluated, Tell.
// scripts/sepcma_timing.py times SepCMA's the same way.
//
//	go test -run XXX -bench 'BenchmarkGeneration/n=(10000|100000)$' -benchtime 20x -count 5 ./internal/sepcma/
func BenchmarkGeneration(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			e, err := New(Config{X0: fill(n, 1), Sigma0: 0.5, Seed: 1, Termination: noStop})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Tell(evalAll(sphere, e.Ask())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(e.Params().Lambda), "λ")
		})
	}
}
