package session

import (
	"context"
	"fmt"

	"github.com/selfcma/selfcma/internal/cmaes"
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
	C          [][]float64 // n rows of n; symmetric
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
	if n := l.opt.Dim(); n > MaxCovarianceDimension {
		return Covariance{}, errorf(CodeOutOfRange,
			"the covariance matrix of a session of %d coordinates is %d numbers; it is served up to %d coordinates: "+
				"stds (σ·√C_ii) and the history's axis_lengths (√ of C's eigenvalues) describe it instead",
			n, n*n, MaxCovarianceDimension)
	}
	es, ok := primaryOf(l.opt)
	if !ok {
		return Covariance{}, internal("covariance", fmt.Errorf("an optimizer of type %T", l.opt))
	}
	c := es.C()
	n := c.SymmetricDim()
	out := Covariance{Generation: l.opt.Generation(), Sigma: es.Sigma(), C: make([][]float64, n)}
	for i := range out.C {
		out.C[i] = make([]float64, n)
		for j := range n {
			out.C[i][j] = c.At(i, j)
		}
	}
	return out, nil
}

// primaryOf returns the CMA-ES that samples o's candidates.
func primaryOf(o optimizer) (*cmaes.ES, bool) {
	switch e := o.(type) {
	case selfES:
		return e.Primary(), true
	case plainES:
		return e.ES, true
	}
	return nil, false
}
