package constraints

import "fmt"

// Restore returns the augmented Lagrangian of n coordinates and m
// constraints in state s (as internal/enginecodec decodes it), once s has
// the shapes an AL of that size makes: a state that Tell could not have
// made is refused, never panicked on.
func Restore(n, m int, s State) (*AL, error) {
	a, err := New(n, m)
	if err != nil {
		return nil, err
	}
	a.State = s
	if h := len(s.GHistory); h > a.Params.HistoryLen {
		return nil, fmt.Errorf("g history of %d rows, at most %d", h, a.Params.HistoryLen)
	}
	if err := a.checkShapes(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *AL) checkShapes() error {
	s, m := &a.State, a.Params.M
	coef := 0
	if s.Set {
		coef = m
	}
	pen := 0
	if s.PenCounted {
		pen = m
	}
	prev := 0
	if s.HavePrev {
		prev = m
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"lam", len(s.Lam), coef}, {"mu", len(s.Mu), coef}, {"initialized", len(s.Initialized), coef},
		{"pen_count", len(s.PenCount), pen}, {"prev_g", len(s.PrevG), prev},
	} {
		if c.got != c.want {
			return fmt.Errorf("%s has %d values, want %d", c.name, c.got, c.want)
		}
	}
	if s.SameChanges != nil && len(s.SameChanges) != m {
		return fmt.Errorf("same_changes has %d values, want %d", len(s.SameChanges), m)
	}
	for i, row := range s.GHistory {
		if len(row) != m {
			return fmt.Errorf("g history row %d has %d values, want %d", i, len(row), m)
		}
	}
	return nil
}

// MemoryBytes returns about how many bytes the augmented Lagrangian holds:
// its coefficients and the history of n + 20 constraint vectors.
func (a *AL) MemoryBytes() int {
	m := a.Params.M
	return 8*(m*(a.Params.HistoryLen+7)) + 256
}
