package session

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// metaSchema is the version of the persisted session record (Record.Meta)
// and history entries. Bump it with any incompatible change of either.
const metaSchema = 1

// meta is the persisted session record without the optimizer state: who the
// session is, what a list shows, and the last applied tell.
type meta struct {
	Schema    int             `json:"schema"`
	ID        string          `json:"id"`
	Name      string          `json:"name,omitempty"`
	Algorithm string          `json:"algorithm"`
	Metadata  json.RawMessage `json:"metadata,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`

	// A summary of the optimizer state, for List.
	Dimension      int      `json:"dimension"`
	PopulationSize int      `json:"population_size"`
	Status         string   `json:"status"`
	Generation     int      `json:"generation"`
	Evaluations    int      `json:"evaluations"`
	BestF          *float64 `json:"best_f,omitempty"`

	// LastTell is the tell that produced the current state: a retry equal to
	// it is answered with the current state, which is what it was answered
	// first (no other change of a session exists between two tells).
	LastTell *lastTell `json:"last_tell,omitempty"`
}

type lastTell struct {
	Generation int       `json:"generation"`
	Fitness    []nullNum `json:"fitness"`
}

// nullNum is a float64 that JSON writes as null when it is not finite, and
// reads null as NaN.
type nullNum float64

func (f nullNum) MarshalJSON() ([]byte, error) {
	if !finite(float64(f)) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
}

func (f *nullNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = nullNum(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = nullNum(v)
	return err
}

func (m *meta) summarize(o optimizer) {
	m.Dimension = o.Dim()
	m.PopulationSize = o.Params().Lambda
	m.Status = StatusRunning
	if len(o.Stopped()) > 0 {
		m.Status = StatusStopped
	}
	m.Generation, m.Evaluations = o.Generation(), o.Evaluations()
	m.BestF = nil
	if b, ok := o.Best(); ok {
		f := b.F
		m.BestF = &f
	}
}

func encodeMeta(m *meta) ([]byte, error) {
	m.Schema = metaSchema
	return json.Marshal(m)
}

func decodeMeta(b []byte) (*meta, error) {
	m := new(meta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("decode session record: %w", err)
	}
	if m.Schema != metaSchema {
		return nil, fmt.Errorf("decode session record: schema %d, this server reads %d", m.Schema, metaSchema)
	}
	return m, nil
}

// historyJSON is the persisted form of a HistoryRecord.
type historyJSON struct {
	Schema      int      `json:"schema"`
	Generation  int      `json:"generation"`
	Run         int      `json:"run"`
	Lambda      int      `json:"lambda"`
	Evaluations int      `json:"evaluations"`
	Best        nullNum  `json:"best"`
	Median      nullNum  `json:"median"`
	BestSoFar   nullNum  `json:"best_so_far"`
	Sigma       nullNum  `json:"sigma"`
	C1          nullNum  `json:"c1"`
	CMu         nullNum  `json:"cmu"`
	Cc          nullNum  `json:"cc"`
	AxisRatio   nullNum  `json:"axis_ratio"`
	Restarted   bool     `json:"restarted,omitempty"`
	Aux         *auxJSON `json:"aux,omitempty"`
}

type auxJSON struct {
	Mean     [3]nullNum `json:"mean"`
	Sigma    nullNum    `json:"sigma"`
	Feasible bool       `json:"feasible"`
}

func encodeHistory(h HistoryRecord) ([]byte, error) {
	j := historyJSON{
		Schema: metaSchema, Generation: h.Generation, Run: h.Run, Lambda: h.Lambda, Evaluations: h.Evaluations,
		Best: nullNum(h.Best), Median: nullNum(h.Median), BestSoFar: nullNum(h.BestSoFar), Sigma: nullNum(h.Sigma),
		C1: nullNum(h.C1), CMu: nullNum(h.CMu), Cc: nullNum(h.Cc), AxisRatio: nullNum(h.AxisRatio),
		Restarted: h.Restarted,
	}
	if a := h.Aux; a != nil {
		j.Aux = &auxJSON{Mean: [3]nullNum{nullNum(a.Mean[0]), nullNum(a.Mean[1]), nullNum(a.Mean[2])}, Sigma: nullNum(a.Sigma), Feasible: a.Feasible}
	}
	return json.Marshal(j)
}

func decodeHistory(b []byte) (HistoryRecord, error) {
	var j historyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return HistoryRecord{}, fmt.Errorf("decode history record: %w", err)
	}
	if j.Schema != metaSchema {
		return HistoryRecord{}, fmt.Errorf("decode history record: schema %d, this server reads %d", j.Schema, metaSchema)
	}
	h := HistoryRecord{
		Generation: j.Generation, Run: j.Run, Lambda: j.Lambda, Evaluations: j.Evaluations,
		Best: float64(j.Best), Median: float64(j.Median), BestSoFar: float64(j.BestSoFar), Sigma: float64(j.Sigma),
		C1: float64(j.C1), CMu: float64(j.CMu), Cc: float64(j.Cc), AxisRatio: float64(j.AxisRatio),
		Restarted: j.Restarted,
	}
	if a := j.Aux; a != nil {
		h.Aux = &AuxRecord{Mean: [3]float64{float64(a.Mean[0]), float64(a.Mean[1]), float64(a.Mean[2])}, Sigma: float64(a.Sigma), Feasible: a.Feasible}
	}
	return h, nil
}
