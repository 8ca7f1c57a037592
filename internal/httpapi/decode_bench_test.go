package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDecodeTell: a tell's body of λ values read by the hand-written
// scanner (tellFast) and by encoding/json (decodeTellJSON), the path every
// other body takes. The scanner is kept only while it buys at least 2×.
func BenchmarkDecodeTell(b *testing.B) {
	for _, lambda := range []int{10, 100, 1000} {
		r := rand.New(rand.NewPCG(1, 2))
		fitness := make([]float64, lambda)
		for i := range fitness {
			fitness[i] = r.NormFloat64() * 1e3
		}
		body, err := json.Marshal(map[string]any{"generation": 12345, "fitness": fitness})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("λ=%d/scanner", lambda), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := tellFast(body); !ok {
					b.Fatal("the scanner refused the body")
				}
			}
		})
		b.Run(fmt.Sprintf("λ=%d/encoding-json", lambda), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeTellJSON(bytes.NewReader(body)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
