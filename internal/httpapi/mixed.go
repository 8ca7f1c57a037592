package httpapi

import (
	"strconv"

	"github.com/selfcma/selfcma/internal/session"
)

// A mixed session's (session/mixed.go) parts of the bodies: z and c beside
// x in candidates, claims and best points, and the space.

// mixedJSON is a mixed session's space and categorical distributions.
type mixedJSON struct {
	Continuous int    `json:"continuous"`
	Integers   matrix `json:"integers"`
	Categories []int  `json:"categories"`
	Q          matrix `json:"q"`
}

func toMixedJSON(s session.Session, j *sessionJSON) {
	m := s.Mixed
	if m == nil {
		return
	}
	j.Mixed = &mixedJSON{Continuous: m.Continuous, Integers: matrix(m.Integers), Categories: m.Categories, Q: matrix(m.Q)}
	if j.Mixed.Integers == nil {
		j.Mixed.Integers = matrix{}
	}
	if j.Mixed.Categories == nil {
		j.Mixed.Categories = []int{}
	}
	if j.Mixed.Q == nil {
		j.Mixed.Q = matrix{}
	}
	if b := s.Best; b != nil && j.Best != nil {
		j.Best.Z, j.Best.C = nums(b.Z), b.C
	}
	if b := s.BestFeasible; b != nil && j.BestFeasible != nil {
		j.BestFeasible.Z, j.BestFeasible.C = nums(b.Z), b.C
	}
}

func appendInts(b []byte, v []int) []byte {
	b = append(b, '[')
	for i, k := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(k), 10)
	}
	return append(b, ']')
}

// appendBatchZC appends a mixed batch's ,"z":[[...]],"c":[[...]] (both,
// each row possibly empty), nothing for another batch.
func appendBatchZC(b []byte, bt session.Batch) []byte {
	if bt.Z == nil {
		return b
	}
	b = append(b, `,"z":`...)
	b = appendMatrix(b, bt.Z)
	b = append(b, `,"c":[`...)
	for k, c := range bt.C {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendInts(b, c)
	}
	return append(b, ']')
}

// mixedOf reads a create's integers and categories; an empty list and
// null values are errors naming their place.
func mixedOf(z [][]*float64, c []int) ([][]float64, []int, error) {
	var out [][]float64
	for i, row := range z {
		if row == nil {
			return nil, nil, invalid("integers[%d] is null, want a list of at least 2 values", i)
		}
		v, err := numbers("integers["+strconv.Itoa(i)+"]", row)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, v)
	}
	if z != nil && out == nil {
		out = [][]float64{}
	}
	return out, c, nil
}
