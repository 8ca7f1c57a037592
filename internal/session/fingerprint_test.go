package session

import (
	"encoding/hex"
	"testing"
)

// The fingerprint of an idempotent create is that of the JSON of its
// CreateParams: a field added to them must leave the fingerprint of a
// create that does not use it as it was, or a create sent again after an
// upgrade would be refused as another create. The hashes are those of the
// server before active CMA-ES, BIPOP, incpopsize and restart points.
func TestFingerprintOfOldCreatesUnchanged(t *testing.T) {
	seed, max, tol := uint64(42), 3, 1e-9
	tests := []struct {
		name string
		p    CreateParams
		want string
	}{
		{"minimal", CreateParams{X0: []float64{1, 2}, Sigma0: 0.5}, "0517401b7eeff2d8a586973f317f62ab26a4c9c196a9a6357fd9e56d851e6460"},
		{"every field", CreateParams{
			X0: []float64{0.5, -1}, Sigma0: 2, PopulationSize: 12, Algorithm: AlgorithmCMAES, Seed: &seed,
			Bounds: &Bounds{Lower: []float64{-5, -5}, Upper: []float64{5, 5}}, Init: "",
			Restarts:    Restarts{Strategy: "ipop", Max: &max},
			Termination: Termination{MaxEvaluations: 1000, TolFun: &tol},
			Name:        "n", Metadata: []byte(`{"a": 1}`), IdempotencyKey: "k",
		}, "4ae1d7441c23fd1579421480cad6d4cbb589fbc771f154f97d176a2530631232"},
		{"warm start", CreateParams{Sigma0: 1, WarmStart: "abc", Restarts: Restarts{Strategy: "none"}}, "6ec0f3d94c348be98139b461adc9d0c2f14041033a8e00fe717db292be6b1ce7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hex.EncodeToString(fingerprint(tc.p)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// The new fields count in the fingerprint when given: a create with them
// is another create than one without.
func TestFingerprintOfNewFields(t *testing.T) {
	base := CreateParams{X0: []float64{1, 2}, Sigma0: 0.5}
	no, inc := false, 2.0
	seen := map[string]string{hex.EncodeToString(fingerprint(base)): "without"}
	for name, edit := range map[string]func(p *CreateParams){
		"active false": func(p *CreateParams) { p.Active = &no },
		"incpopsize":   func(p *CreateParams) { p.Restarts.IncPopSize = &inc },
		"point":        func(p *CreateParams) { p.Restarts.Point = PointX0 },
		"region":       func(p *CreateParams) { p.Restarts.Region = &Bounds{Lower: []float64{0, 0}, Upper: []float64{1, 1}} },
		"bipop":        func(p *CreateParams) { p.Restarts.Strategy = RestartsBIPOP },
		"constraints":  func(p *CreateParams) { p.Constraints = &Constraints{Count: 1} },
	} {
		p := base
		edit(&p)
		h := hex.EncodeToString(fingerprint(p))
		if other, ok := seen[h]; ok {
			t.Errorf("%s: the fingerprint of %s", name, other)
		}
		seen[h] = name
	}
}
