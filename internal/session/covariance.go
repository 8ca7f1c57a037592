package session

import (
	"context"
)

// MaxCovarianceDimension is the largest dimension whose covariance matrix
// Covariance hands out: n² numbers, 40,000 at n = 200 (about 1 MB of
// JSON). Larger sessions have the standard deviations and the principal
// axis lengths (Session.Stds, HistoryRecord.AxisLengths).
const MaxCovarianceDimension = 200

// Covariance is the distribution N(m, σ²C) of a session's pending
// generation: the one its pending batch is sampled from.
type Covariance struct {
	Generation int
	Sigma      float64
	C          [][]float64 // n rows of n; symmetric; nil for a sep-CMA-ES above MaxCovarianceDimension
	Diagonal   []float64   // sep-CMA-ES only: C's diagonal (C is diagonal)
}

// Covariance returns σ and C of session id (of the primary CMA-ES of a
// self-CMA-ES), for sessions of at most MaxCovarianceDimension coordinates;
// a larger one gets an out_of_range error that says what it has instead.
func (m *Manager) Covariance(ctx context.Context, id string) (Covariance, error) {
	e := m.acquire(id)
	defer m.release(e)
	l, err := m.load(ctx, e, id)
	if err != nil {
		return Covariance{}, err
	}
	st := l.opt.Status() // the primary's, for a self-CMA-ES
	if st.C == nil {
		return diagonalCovariance(st), nil
	}
	if n := st.Params.N; n > MaxCovarianceDimension {
		return Covariance{}, errorf(CodeOutOfRange,
			"the covariance matrix of a session of %d coordinates is %d numbers; it is served up to %d coordinates: "+
				"stds (σ·√C_ii) and the history's axis_lengths (√ of C's eigenvalues) describe it instead",
			n, n*n, MaxCovarianceDimension)
	}
	n := st.C.SymmetricDim()
	out := Covariance{Generation: st.Generation, Sigma: st.Sigma, C: make([][]float64, n)}
	for i := range out.C {
		out.C[i] = make([]float64, n)
		for j := range n {
			out.C[i][j] = st.C.At(i, j)
		}
	}
	return out, nil
}
