package session

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/selfcma/selfcma/internal/binenc"
)

// The persisted session record (Record.Meta) and history entries are
// written in binenc's exact binary encoding, schemas recordSchema and
// historySchema. Schema 1, which earlier servers wrote, was JSON; it is
// still read (a JSON record starts with '{', a binenc blob with its tag's
// length). Record schema 3 added the partial tell; a record that holds none
// is still written in schema 2, which servers before 3 read. Record schema
// 4 added StopRequested, written only by a stop (a stopped session's record
// is schema 4, every other as before). History schema 3 added the
// distribution after the update (HistoryRecord's OverallStep, AxisLengths,
// Stds, Mean); entries of schema 2 still read. History schema 4 added the
// number of injected candidates (HistoryRecord.Injected), written only by a
// generation that had some (every other entry as before, in schema 3).
// Record schema 5 added the idempotency keys of injections (InjectKeys),
// written only by a session that had an injection with a key. Record
// schema 6 added a constrained session's part (constraints.go), written
// only by constrained sessions; history schema 5 their ConstraintRecord.
const (
	recordSchema  = 6
	historySchema = 5
	metaMagic     = "selfcma.session"
	historyMagic  = "selfcma.history"

	// metaSchema is the version the JSON records of schema 1 carry.
	metaSchema = 1
)

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

	// Partial holds the values of the pending generation told so far by
	// partial tells; nil when there are none.
	Partial *partialTell `json:"-"`

	// StopRequested: the client stopped the session (Manager.Stop). A stop
	// writes the meta only: the stored state is the state before it, and
	// loading applies the stop to it (as ES.StopNow, the generations told
	// as its value, exactly what a stored stopped state holds).
	StopRequested bool `json:"-"`

	// InjectKeys are the idempotency keys of the last injections that
	// had one (at most maxInjectKeys, oldest first), with what they were
	// answered: a retried injection is answered again, not queued twice.
	InjectKeys []injectKey `json:"-"`

	// Constrained is a constrained session's augmented Lagrangian, best
	// points and constraint values (constraints.go); nil otherwise.
	Constrained *constrainedMeta `json:"-"`
}

// injectKey is an injection's Idempotency-Key, the fingerprint of its
// points and clip, and its answer.
type injectKey struct {
	Key         string
	Fingerprint []byte
	Answer      Injection
}

// partialTell is meta.Partial: Indices ascending, Fitness[k] the value of
// candidate Indices[k] of generation Generation (NaN = failed).
type partialTell struct {
	Generation int
	Indices    []int
	Fitness    []float64
	G          [][]float64 // a constrained session's constraint values of each
}

type lastTell struct {
	Generation int         `json:"generation"`
	Fitness    []nullNum   `json:"fitness"`
	G          [][]float64 `json:"-"` // a constrained session's constraint values of each
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
	st := o.Status()
	m.Dimension = st.Params.N
	m.PopulationSize = st.Params.Lambda
	m.Status = StatusRunning
	if len(st.Stop) > 0 {
		m.Status = StatusStopped
	}
	m.Generation, m.Evaluations = st.Generation, st.Evaluations
	m.BestF = nil
	if st.HasBest {
		f := st.Best.F
		m.BestF = &f
	}
	if c := m.Constrained; c != nil { // the engine's best is of the AL
		m.BestF = nil
		if c.Best != nil {
			f := c.Best.F
			m.BestF = &f
		}
	}
}

// encodeMeta writes m in the oldest schema that holds it: 2 unless it holds
// a partial tell (3), a stop (4), injection keys (5) or constraints (6),
// so that a server of before schema 3 reads every session that uses no
// partial tell.
func encodeMeta(m *meta) ([]byte, error) {
	schema := uint32(2)
	switch {
	case m.Constrained != nil:
		schema = 6
	case len(m.InjectKeys) > 0:
		schema = 5
	case m.StopRequested:
		schema = 4
	case m.Partial != nil:
		schema = 3
	}
	w := binenc.NewWriterSize(metaMagic, schema, 256+len(m.Metadata)+len(m.Name))
	w.String(m.ID)
	w.String(m.Name)
	w.String(m.Algorithm)
	w.Bool(m.Metadata != nil)
	w.Bytes(m.Metadata)
	putTime(w, m.CreatedAt)
	putTime(w, m.UpdatedAt)
	w.Int(m.Dimension)
	w.Int(m.PopulationSize)
	w.String(m.Status)
	w.Int(m.Generation)
	w.Int(m.Evaluations)
	w.Bool(m.BestF != nil)
	if m.BestF != nil {
		w.Float(*m.BestF)
	}
	w.Bool(m.LastTell != nil)
	if lt := m.LastTell; lt != nil {
		w.Int(lt.Generation)
		w.Int(len(lt.Fitness))
		for _, f := range lt.Fitness {
			w.Float(float64(f))
		}
	}
	if p := m.Partial; schema >= 3 {
		w.Bool(p != nil)
		if p != nil {
			w.Int(p.Generation)
			w.Ints(p.Indices)
			w.Floats(p.Fitness)
		}
	}
	if schema >= 4 {
		w.Bool(m.StopRequested)
	}
	if schema >= 5 {
		w.Int(len(m.InjectKeys))
		for _, k := range m.InjectKeys {
			w.String(k.Key)
			w.Bytes(k.Fingerprint)
			w.Int(k.Answer.Queued)
			w.Int(k.Answer.Generation)
			w.Int(k.Answer.Waiting)
		}
	}
	if schema >= 6 {
		putConstrained(w, m)
	}
	return w.Finish(), nil
}

func putTime(w *binenc.Writer, t time.Time) {
	w.Int(int(t.Unix()))
	w.Int(t.Nanosecond())
}

func getTime(r *binenc.Reader) time.Time {
	sec, nsec := r.Int(), r.Int()
	if nsec < 0 || nsec >= 1e9 {
		r.Fail("nanoseconds %d", nsec)
	}
	return time.Unix(int64(sec), int64(nsec)).UTC()
}

func decodeMeta(b []byte) (*meta, error) {
	if len(b) > 0 && b[0] == '{' {
		return decodeMetaJSON(b)
	}
	r, schema, err := binenc.NewReaderVersions(b, metaMagic, 2, recordSchema)
	if err != nil {
		return nil, fmt.Errorf("decode session record: %w", err)
	}
	m := &meta{Schema: int(schema), ID: r.String(), Name: r.String(), Algorithm: r.String()}
	hasMetadata := r.Bool()
	if md := r.Bytes(); hasMetadata {
		m.Metadata = append(json.RawMessage{}, md...)
	}
	m.CreatedAt, m.UpdatedAt = getTime(r), getTime(r)
	m.Dimension, m.PopulationSize, m.Status = r.Int(), r.Int(), r.String()
	m.Generation, m.Evaluations = r.Int(), r.Int()
	if r.Bool() {
		f := r.Float()
		m.BestF = &f
	}
	if r.Bool() {
		lt := &lastTell{Generation: r.Int()}
		n := r.Int()
		if n < 0 || n > r.Remaining()/8 {
			r.Fail("last tell of %d values", n)
		} else {
			lt.Fitness = make([]nullNum, n)
			for i := range lt.Fitness {
				lt.Fitness[i] = nullNum(r.Float())
			}
		}
		m.LastTell = lt
	}
	if schema >= 3 && r.Bool() {
		p := &partialTell{Generation: r.Int(), Indices: r.Ints(), Fitness: r.Floats()}
		if len(p.Indices) != len(p.Fitness) || !ascending(p.Indices) {
			r.Fail("partial tell of %d indices and %d values", len(p.Indices), len(p.Fitness))
		}
		m.Partial = p
	}
	if schema >= 4 {
		m.StopRequested = r.Bool()
	}
	if schema >= 5 {
		n := r.Int()
		if n < 0 || n > maxInjectKeys {
			r.Fail("%d injection keys", n)
			n = 0
		}
		for range n {
			k := injectKey{Key: r.String(), Fingerprint: append([]byte(nil), r.Bytes()...)}
			k.Answer = Injection{Queued: r.Int(), Generation: r.Int(), Waiting: r.Int()}
			m.InjectKeys = append(m.InjectKeys, k)
		}
	}
	if schema >= 6 {
		getConstrained(r, m)
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("decode session record: %w", err)
	}
	return m, nil
}

// ascending reports whether v increases strictly.
func ascending(v []int) bool {
	for i := 1; i < len(v); i++ {
		if v[i] <= v[i-1] {
			return false
		}
	}
	return true
}

// decodeMetaJSON reads a record of schema 1.
func decodeMetaJSON(b []byte) (*meta, error) {
	m := new(meta)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("decode session record: %w", err)
	}
	if m.Schema != metaSchema {
		return nil, fmt.Errorf("decode session record: schema %d, this server reads %d to %d", m.Schema, metaSchema, recordSchema)
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

// What the history keeps per coordinate (the axis lengths, standard
// deviations and mean of HistoryRecord), so that a session's history stays
// bounded: nothing above HistoryMaxCoordinates coordinates; otherwise every
// generation below HistoryDenseGenerations, then generation g when it is a
// multiple of 2^(⌊log2(g/HistoryDenseGenerations)⌋+1). That keeps
// HistoryDenseGenerations/2 entries per doubling of the generation count:
// at most 1000 + 500·⌈log2(G/1000)⌉ of G generations (4 500 of 100 000).
// The scalars are kept in every entry.
const (
	HistoryMaxCoordinates   = 100
	HistoryDenseGenerations = 1000
)

// HistoryKeepsCoordinates reports whether the history entry of generation g
// of a session of dimension n keeps the per-coordinate values.
func HistoryKeepsCoordinates(g, n int) bool {
	if n < 1 || n > HistoryMaxCoordinates || g < 0 {
		return false
	}
	if g < HistoryDenseGenerations {
		return true
	}
	k := bits.Len(uint(g/HistoryDenseGenerations)) - 1 // ⌊log2(g/HistoryDenseGenerations)⌋
	return g%(1<<(k+1)) == 0
}

// encodeHistory writes h in schema 3, or 4 when the generation had
// injected candidates, or 5 for a constrained session's, its
// per-coordinate values only where
// HistoryKeepsCoordinates says so.
func encodeHistory(h HistoryRecord) ([]byte, error) {
	n := len(h.Mean)
	keep := len(h.AxisLengths) == n && len(h.Stds) == n && HistoryKeepsCoordinates(h.Generation, n)
	schema := uint32(3)
	switch {
	case h.Constraint != nil:
		schema = 5
	case h.Injected != 0:
		schema = 4
	}
	w := binenc.NewWriterSize(historyMagic, schema, 208+24*n)
	w.Int(h.Generation)
	w.Int(h.Run)
	w.Int(h.Lambda)
	w.Int(h.Evaluations)
	for _, v := range [...]float64{h.Best, h.Median, h.BestSoFar, h.Sigma, h.C1, h.CMu, h.Cc, h.AxisRatio} {
		w.Float(v)
	}
	w.Bool(h.Restarted)
	w.Bool(h.Aux != nil)
	if a := h.Aux; a != nil {
		for _, v := range a.Mean {
			w.Float(v)
		}
		w.Float(a.Sigma)
		w.Bool(a.Feasible)
	}
	w.Float(h.OverallStep)
	w.Bool(keep)
	if keep {
		w.Floats(h.AxisLengths)
		w.Floats(h.Stds)
		w.Floats(h.Mean)
	}
	if schema >= 4 {
		w.Int(h.Injected)
	}
	if c := h.Constraint; schema >= 5 {
		w.Int(c.Feasible)
		w.Float(c.Violation)
		w.Float(c.BestFeasible)
		w.Float(c.BestFeasibleSoFar)
	}
	return w.Finish(), nil
}

func decodeHistory(b []byte) (HistoryRecord, error) {
	if len(b) > 0 && b[0] == '{' {
		return decodeHistoryJSON(b)
	}
	r, schema, err := binenc.NewReaderVersions(b, historyMagic, 2, historySchema)
	if err != nil {
		return HistoryRecord{}, fmt.Errorf("decode history record: %w", err)
	}
	h := HistoryRecord{Generation: r.Int(), Run: r.Int(), Lambda: r.Int(), Evaluations: r.Int(), OverallStep: math.NaN()}
	for _, p := range [...]*float64{&h.Best, &h.Median, &h.BestSoFar, &h.Sigma, &h.C1, &h.CMu, &h.Cc, &h.AxisRatio} {
		*p = r.Float()
	}
	h.Restarted = r.Bool()
	if r.Bool() {
		a := &AuxRecord{}
		for i := range a.Mean {
			a.Mean[i] = r.Float()
		}
		a.Sigma, a.Feasible = r.Float(), r.Bool()
		h.Aux = a
	}
	if schema >= 3 {
		h.OverallStep = r.Float()
		if r.Bool() {
			h.AxisLengths, h.Stds, h.Mean = r.Floats(), r.Floats(), r.Floats()
			if n := len(h.Mean); n < 1 || n > HistoryMaxCoordinates || len(h.AxisLengths) != n || len(h.Stds) != n {
				r.Fail("%d axis lengths, %d standard deviations and %d mean coordinates", len(h.AxisLengths), len(h.Stds), n)
			}
		}
	}
	if schema >= 4 {
		if h.Injected = r.Int(); h.Injected < 0 || h.Injected > h.Lambda {
			r.Fail("%d injected candidates of %d", h.Injected, h.Lambda)
		}
	}
	if schema >= 5 {
		c := &ConstraintRecord{Feasible: r.Int(), Violation: r.Float(), BestFeasible: r.Float(), BestFeasibleSoFar: r.Float()}
		if c.Feasible < 0 || c.Feasible > h.Lambda {
			r.Fail("%d feasible candidates of %d", c.Feasible, h.Lambda)
		}
		h.Constraint = c
	}
	if err := r.Done(); err != nil {
		return HistoryRecord{}, fmt.Errorf("decode history record: %w", err)
	}
	return h, nil
}

// decodeHistoryJSON reads an entry of schema 1.
func decodeHistoryJSON(b []byte) (HistoryRecord, error) {
	var j historyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return HistoryRecord{}, fmt.Errorf("decode history record: %w", err)
	}
	if j.Schema != metaSchema {
		return HistoryRecord{}, fmt.Errorf("decode history record: schema %d, this server reads %d to %d", j.Schema, metaSchema, historySchema)
	}
	h := HistoryRecord{
		Generation: j.Generation, Run: j.Run, Lambda: j.Lambda, Evaluations: j.Evaluations,
		Best: float64(j.Best), Median: float64(j.Median), BestSoFar: float64(j.BestSoFar), Sigma: float64(j.Sigma),
		C1: float64(j.C1), CMu: float64(j.CMu), Cc: float64(j.Cc), AxisRatio: float64(j.AxisRatio),
		Restarted: j.Restarted, OverallStep: math.NaN(),
	}
	if a := j.Aux; a != nil {
		h.Aux = &AuxRecord{Mean: [3]float64{float64(a.Mean[0]), float64(a.Mean[1]), float64(a.Mean[2])}, Sigma: float64(a.Sigma), Feasible: a.Feasible}
	}
	return h, nil
}
