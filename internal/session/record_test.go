package session

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/exactbits"
)

// sameMeta compares two records, NaN equal to NaN.
func sameMeta(a, b *meta) bool {
	x, y := *a, *b
	fa, fb := x.LastTell, y.LastTell
	pa, pb := x.Partial, y.Partial
	x.LastTell, y.LastTell, x.Partial, y.Partial = nil, nil, nil, nil
	if !reflect.DeepEqual(x, y) || (fa == nil) != (fb == nil) || (pa == nil) != (pb == nil) {
		return false
	}
	if pa != nil && (pa.Generation != pb.Generation || !reflect.DeepEqual(pa.Indices, pb.Indices) || !exactbits.Same(pa.Fitness, pb.Fitness)) {
		return false
	}
	if fa == nil {
		return true
	}
	if fa.Generation != fb.Generation || len(fa.Fitness) != len(fb.Fitness) {
		return false
	}
	for i := range fa.Fitness {
		if math.Float64bits(float64(fa.Fitness[i])) != math.Float64bits(float64(fb.Fitness[i])) {
			return false
		}
	}
	return true
}

func TestMetaRoundTrip(t *testing.T) {
	best := 0.1 + 0.2
	created := time.Date(2026, 11, 23, 10, 57, 27, 123456789, time.UTC)
	for name, m := range map[string]*meta{
		"new": {ID: "0193a1b2-c3d4-7e5f-8a9b-000000000001", Algorithm: AlgorithmSelfCMAES, CreatedAt: created, UpdatedAt: created,
			Dimension: 10, PopulationSize: 100, Status: StatusRunning},
		"told": {ID: "x", Name: "naïve \"run\" <1>", Algorithm: AlgorithmCMAES, Metadata: json.RawMessage(`{"k":[1,"é"]}`),
			CreatedAt: created, UpdatedAt: created.Add(36 * time.Hour), Dimension: 3, PopulationSize: 7, Status: StatusStopped,
			Generation: 12, Evaluations: 84, BestF: &best,
			LastTell: &lastTell{Generation: 11, Fitness: []nullNum{1, nullNum(math.NaN()), nullNum(math.Copysign(0, -1)), 5e-324, 7}}},
		"partial": {ID: "z", Algorithm: AlgorithmCMAES, CreatedAt: created, UpdatedAt: created, Dimension: 2, PopulationSize: 6,
			Status: StatusRunning, Generation: 4, Evaluations: 24, BestF: &best,
			LastTell: &lastTell{Generation: 3, Fitness: []nullNum{1, 2, 3, 4, 5, 6}},
			Partial:  &partialTell{Generation: 4, Indices: []int{0, 2, 5}, Fitness: []float64{0.5, math.NaN(), math.Copysign(0, -1)}}},
		"stop requested": {ID: "s", Algorithm: AlgorithmCMAES, CreatedAt: created, UpdatedAt: created, Dimension: 2, PopulationSize: 6,
			Status: StatusStopped, Generation: 4, Evaluations: 24, StopRequested: true,
			Partial: &partialTell{Generation: 4, Indices: []int{1}, Fitness: []float64{2}}},
		"stop requested, none held": {ID: "s", Algorithm: AlgorithmCMAES, CreatedAt: created, UpdatedAt: created, Dimension: 2,
			PopulationSize: 6, Status: StatusStopped, StopRequested: true},
		"inject keys": {ID: "k", Algorithm: AlgorithmCMAES, CreatedAt: created, UpdatedAt: created, Dimension: 2, PopulationSize: 6,
			Status: StatusRunning, Generation: 4, Evaluations: 24, StopRequested: true,
			Partial: &partialTell{Generation: 4, Indices: []int{1}, Fitness: []float64{2}},
			InjectKeys: []injectKey{{Key: "a", Fingerprint: []byte{1, 2, 3}, Answer: Injection{Queued: 2, Generation: 5, Waiting: 3}},
				{Key: "b-2", Fingerprint: bytes.Repeat([]byte{9}, 32), Answer: Injection{Queued: 1, Generation: 7, Waiting: 1}}}},
		"empty metadata": {ID: "y", Metadata: json.RawMessage(`{}`), CreatedAt: time.Unix(0, 0).UTC(), UpdatedAt: time.Unix(-1, 5).UTC()},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := encodeMeta(m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeMeta(b)
			if err != nil {
				t.Fatal(err)
			}
			want := *m
			want.Schema = 2 // the oldest schema that holds it
			if m.Partial != nil {
				want.Schema = 3
			}
			if m.StopRequested {
				want.Schema = 4
			}
			if len(m.InjectKeys) > 0 {
				want.Schema = 5
			}
			if !sameMeta(got, &want) {
				t.Fatalf("decoded %+v\nwant    %+v", got, &want)
			}
			for i := range b { // every corrupted byte is refused
				c := bytes.Clone(b)
				c[i] ^= 0x20
				if _, err := decodeMeta(c); err == nil {
					t.Fatalf("byte %d flipped: decoded", i)
				}
			}
		})
	}
}

// TestMetaSchema2: a record of schema 2, as the server before schema 3
// wrote it (testdata/meta-schema2.hex), still reads; a record without a
// partial tell is written in schema 2, byte for byte as that server wrote
// it, so that it can still read it; a partial tell with its indices out of
// order or of another length than its values does not read.
func TestMetaSchema2(t *testing.T) {
	golden, err := os.ReadFile("testdata/meta-schema2.hex")
	if err != nil {
		t.Fatal(err)
	}
	old, err := hex.DecodeString(strings.TrimSpace(string(golden)))
	if err != nil {
		t.Fatal(err)
	}
	best := 2.5
	m := &meta{ID: "v2", Name: "old", Algorithm: AlgorithmCMAES, CreatedAt: time.Unix(5, 7).UTC(), UpdatedAt: time.Unix(6, 0).UTC(),
		Dimension: 2, PopulationSize: 6, Status: StatusRunning, Generation: 1, Evaluations: 6, BestF: &best,
		LastTell: &lastTell{Generation: 0, Fitness: []nullNum{1, 2, nullNum(math.NaN()), 4, 5, 6}}}
	got, err := decodeMeta(old)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Schema = 2
	if !sameMeta(got, &want) {
		t.Fatalf("decoded %+v\nwant    %+v", got, &want)
	}
	if b, _ := encodeMeta(m); !bytes.Equal(b, old) {
		t.Fatalf("a record without a partial tell is written\n%x\nnot as schema 2 wrote it\n%x", b, old)
	}

	for name, p := range map[string]*partialTell{
		"unordered": {Indices: []int{2, 1}, Fitness: []float64{1, 2}},
		"repeated":  {Indices: []int{1, 1}, Fitness: []float64{1, 2}},
		"short":     {Indices: []int{1, 2}, Fitness: []float64{1}},
	} {
		m.Partial = p
		b, err := encodeMeta(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeMeta(b); err == nil {
			t.Errorf("%s partial tell: decoded", name)
		}
	}
}

func TestHistoryRoundTrip(t *testing.T) {
	for name, h := range map[string]HistoryRecord{
		"cma-es": {Generation: 3, Run: 1, Lambda: 20, Evaluations: 80, Best: 1.5, Median: math.NaN(), BestSoFar: math.Inf(1),
			Sigma: 0.3, C1: 0.01, CMu: 0.2, Cc: 0.3, AxisRatio: 12, Restarted: true},
		"self-cma-es": {Generation: 9, Lambda: 100, Evaluations: 1000, Best: -2, Median: -1, BestSoFar: -2, Sigma: 1e-9,
			C1: 0.02, CMu: 0.5, Cc: 0.4, AxisRatio: 1e7, Aux: &AuxRecord{Mean: [3]float64{0.1, 0.6, 0.5}, Sigma: 0.55, Feasible: true}},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := encodeHistory(h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeHistory(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Aux, h.Aux) || got.Generation != h.Generation || got.Run != h.Run || got.Lambda != h.Lambda ||
				got.Evaluations != h.Evaluations || got.Restarted != h.Restarted {
				t.Fatalf("decoded %+v, want %+v", got, h)
			}
			for i, p := range [][2]float64{{got.Best, h.Best}, {got.Median, h.Median}, {got.BestSoFar, h.BestSoFar}, {got.Sigma, h.Sigma},
				{got.C1, h.C1}, {got.CMu, h.CMu}, {got.Cc, h.Cc}, {got.AxisRatio, h.AxisRatio}} {
				if math.Float64bits(p[0]) != math.Float64bits(p[1]) {
					t.Errorf("value %d: %v, want %v", i, p[0], p[1])
				}
			}
			b[len(b)/2] ^= 1
			if _, err := decodeHistory(b); err == nil {
				t.Error("a corrupted entry decoded")
			}
		})
	}
}

// Records of schema 1 (JSON, as servers before schema 2 wrote them) are
// read: a session created then continues, its history lists old and new
// entries.
func TestSchema1Records(t *testing.T) {
	metaV1 := `{"schema":1,"id":"abc","name":"n","algorithm":"cma-es","metadata":{"k":1},` +
		`"created_at":"2026-11-20T10:00:00.123456789Z","updated_at":"2026-11-20T11:00:00Z","dimension":3,` +
		`"population_size":7,"status":"running","generation":2,"evaluations":14,"best_f":0.25,` +
		`"last_tell":{"generation":1,"fitness":[1.5,null,3,4,5,6,7]}}`
	m, err := decodeMeta([]byte(metaV1))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != "abc" || m.Generation != 2 || *m.BestF != 0.25 || string(m.Metadata) != `{"k":1}` ||
		m.CreatedAt.Nanosecond() != 123456789 || !math.IsNaN(float64(m.LastTell.Fitness[1])) || m.LastTell.Fitness[2] != 3 {
		t.Fatalf("schema 1 record decoded as %+v", m)
	}
	histV1 := `{"schema":1,"generation":1,"run":0,"lambda":7,"evaluations":14,"best":0.25,"median":null,` +
		`"best_so_far":0.25,"sigma":0.4,"c1":0.1,"cmu":0.2,"cc":0.3,"axis_ratio":1.5,` +
		`"aux":{"mean":[0.1,0.2,0.3],"sigma":0.6,"feasible":true}}`
	h, err := decodeHistory([]byte(histV1))
	if err != nil {
		t.Fatal(err)
	}
	if h.Generation != 1 || h.Best != 0.25 || !math.IsNaN(h.Median) || h.Aux == nil || h.Aux.Mean[2] != 0.3 || !h.Aux.Feasible {
		t.Fatalf("schema 1 history decoded as %+v", h)
	}
	if _, err := decodeMeta([]byte(`{"schema":7,"id":"x"}`)); err == nil {
		t.Error("a JSON record of schema 7 decoded")
	}

	// A session whose record is of schema 1 goes on under a Manager.
	ctx := context.Background()
	st := newMemStore()
	mgr := NewManager(st, Options{})
	seed := uint64(3)
	s, err := mgr.Create(ctx, CreateParams{X0: []float64{1, 2, 3}, Sigma0: 0.5, Algorithm: AlgorithmCMAES, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := mgr.Ask(ctx, s.ID)
	f := make([]float64, len(b.Candidates))
	for i, x := range b.Candidates {
		f[i] = x[0]*x[0] + x[1]*x[1] + x[2]*x[2]
	}
	if _, err := mgr.Tell(ctx, s.ID, TellParams{Generation: 0, Fitness: f}); err != nil {
		t.Fatal(err)
	}
	// Rewrite the record and the history entry as schema 1 would have.
	rec := st.recs[s.ID]
	md, _ := decodeMeta(rec.Meta)
	md.Schema = metaSchema
	old, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	rec.Meta = old
	st.recs[s.ID] = rec
	hOld, _ := decodeHistory(st.hist[s.ID][0].Data)
	st.hist[s.ID][0].Data = []byte(`{"schema":1,"generation":0,"run":0,"lambda":` + strconv.Itoa(hOld.Lambda) + `,"evaluations":` +
		strconv.Itoa(hOld.Evaluations) + `,"best":1,"median":2,"best_so_far":1,"sigma":0.5,"c1":0.1,"cmu":0.2,"cc":0.3,"axis_ratio":1}`)

	again := NewManager(st, Options{}) // nothing cached
	got, err := again.Get(ctx, s.ID)
	if err != nil || got.Generation != 1 {
		t.Fatalf("Get of a schema 1 session: %+v, %v", got, err)
	}
	// The retry of the last tell is recognized from the schema 1 record.
	if r, err := again.Tell(ctx, s.ID, TellParams{Generation: 0, Fitness: f}); err != nil || r.Generation != 1 {
		t.Fatalf("retry against a schema 1 record: %+v, %v", r, err)
	}
	b, _ = again.Ask(ctx, s.ID)
	if _, err := again.Tell(ctx, s.ID, TellParams{Generation: 1, Fitness: f[:len(b.Candidates)]}); err != nil {
		t.Fatal(err)
	}
	hist, err := again.History(ctx, s.ID, 0, 0)
	if err != nil || len(hist) != 2 || hist[0].Best != 1 || hist[1].Generation != 1 {
		t.Fatalf("history across schemas: %+v, %v", hist, err)
	}
	if st.recs[s.ID].Meta[0] == '{' {
		t.Error("the record was not rewritten in schema 2")
	}
}

// memStore is a Store in memory, for tests that edit the stored bytes.
type memStore struct {
	recs map[string]Record
	hist map[string][]HistoryEntry
	keys map[string]Record // key -> ID and KeyData
}

func newMemStore() *memStore {
	return &memStore{recs: map[string]Record{}, hist: map[string][]HistoryEntry{}, keys: map[string]Record{}}
}

func (s *memStore) Key(_ context.Context, key string) (string, []byte, error) {
	r, ok := s.keys[key]
	if !ok {
		return "", nil, ErrNoRecord
	}
	return r.ID, r.KeyData, nil
}

func (s *memStore) Get(_ context.Context, id string) (Record, error) {
	r, ok := s.recs[id]
	if !ok {
		return Record{}, ErrNoRecord
	}
	return r, nil
}

func (s *memStore) List(context.Context, string, int) ([]Record, error) { return nil, nil }

func (s *memStore) Put(_ context.Context, rec Record, h *HistoryEntry) (uint64, error) {
	if s.recs[rec.ID].Version != rec.Version {
		return 0, ErrVersion
	}
	if _, taken := s.keys[rec.Key]; rec.Version == 0 && rec.Key != "" && taken {
		return 0, ErrKeyTaken
	}
	if rec.Version == 0 && rec.Key != "" {
		s.keys[rec.Key] = Record{ID: rec.ID, KeyData: bytes.Clone(rec.KeyData)}
	}
	rec.Key, rec.KeyData = "", nil
	rec.Version++
	if rec.State == nil { // the meta only
		rec.State = s.recs[rec.ID].State
	}
	rec.Meta, rec.State = bytes.Clone(rec.Meta), bytes.Clone(rec.State) // Put keeps no slice handed in
	s.recs[rec.ID] = rec
	if h != nil {
		s.hist[rec.ID] = append(s.hist[rec.ID], HistoryEntry{Generation: h.Generation, Data: bytes.Clone(h.Data)})
	}
	return rec.Version, nil
}

func (s *memStore) Delete(context.Context, string, uint64) error { return nil }

func (s *memStore) Version(_ context.Context, id string) (uint64, error) {
	r, ok := s.recs[id]
	if !ok {
		return 0, ErrNoRecord
	}
	return r.Version, nil
}

// UpdateLeases and Leases keep no leases: the tests of memStore claim none.
func (s *memStore) UpdateLeases(context.Context, string, uint64, func(time.Time, []Lease) ([]Lease, error)) error {
	return errors.New("memStore keeps no leases")
}

func (s *memStore) Leases(context.Context, string, uint64) ([]Lease, time.Time, error) {
	return nil, time.Time{}, nil
}

func (s *memStore) History(_ context.Context, id string, from uint64, _ int) ([]HistoryEntry, error) {
	var out []HistoryEntry
	for _, h := range s.hist[id] {
		if h.Generation >= from {
			out = append(out, h)
		}
	}
	return out, nil
}

// schema5Meta is the record of testdata/meta-schema5.hex: one with the
// idempotency keys of two injections.
func schema5Meta() *meta {
	best := 2.5
	return &meta{ID: "v5", Name: "keys", Algorithm: AlgorithmCMAES, CreatedAt: time.Unix(5, 7).UTC(), UpdatedAt: time.Unix(6, 0).UTC(),
		Dimension: 2, PopulationSize: 6, Status: StatusRunning, Generation: 1, Evaluations: 6, BestF: &best,
		LastTell: &lastTell{Generation: 0, Fitness: []nullNum{1, 2, nullNum(math.NaN()), 4, 5, 6}},
		InjectKeys: []injectKey{{Key: "inject-1", Fingerprint: []byte{0xde, 0xad}, Answer: Injection{Queued: 1, Generation: 2, Waiting: 1}},
			{Key: "inject-2", Fingerprint: []byte{0xbe, 0xef}, Answer: Injection{Queued: 2, Generation: 2, Waiting: 3}}}}
}

// TestMetaSchema5: a record with injections' idempotency keys is written
// in schema 5, byte for byte as testdata/meta-schema5.hex holds it (the
// guard against a silent change of the format), and reads back.
func TestMetaSchema5(t *testing.T) {
	golden, err := os.ReadFile("testdata/meta-schema5.hex")
	if err != nil {
		t.Fatal(err)
	}
	want, err := hex.DecodeString(strings.TrimSpace(string(golden)))
	if err != nil {
		t.Fatal(err)
	}
	m := schema5Meta()
	b, err := encodeMeta(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("schema 5 is written\n%x\nnot as the fixture holds it\n%x", b, want)
	}
	got, err := decodeMeta(want)
	if err != nil {
		t.Fatal(err)
	}
	m.Schema = 5
	if !sameMeta(got, m) {
		t.Fatalf("decoded %+v\nwant    %+v", got, m)
	}
}
