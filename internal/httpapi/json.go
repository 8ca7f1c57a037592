package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// JSON has no NaN or infinity: the service writes every non-finite number
// as null. Finite numbers are written as encoding/json writes a float64,
// the shortest decimal that reads back to the same bits.

// num is a float64 written as null when not finite.
type num float64

func (f num) MarshalJSON() ([]byte, error) { return appendNum(nil, float64(f)), nil }

// nums is a []float64 written with null for non-finite values.
type nums []float64

func (v nums) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return appendNums(make([]byte, 0, 2+len(v)*20), v), nil
}

// matrix is a [][]float64 written with null for non-finite values.
type matrix [][]float64

func (m matrix) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	size := 2
	for _, r := range m {
		size += 3 + len(r)*20
	}
	return appendMatrix(make([]byte, 0, size), m), nil
}

func appendMatrix(b []byte, m [][]float64) []byte {
	b = append(b, '[')
	for i, r := range m {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNums(b, r)
	}
	return append(b, ']')
}

func appendNums(b []byte, v []float64) []byte {
	b = append(b, '[')
	for i, f := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, f)
	}
	return append(b, ']')
}

// appendNum appends f as encoding/json does (see its floatEncoder), or null.
func appendNum(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// writeJSON encodes v into a buffer, then writes the status and the body:
// an encoding error becomes a 500, not half a response.
func (s *server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := marshalJSON(v)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeBody(w, status, body)
}

// marshalJSON encodes v as every response body is: no HTML escaping, a
// newline at the end.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeSession writes the session object.
func (s *server) writeSession(w http.ResponseWriter, status int, sess session.Session) {
	j := toSessionJSON(sess)
	s.writeBody(w, status, append(appendSession(make([]byte, 0, 1024), &j), '\n'))
}

// writeBody writes a complete JSON body, given in parts.
func (s *server) writeBody(w http.ResponseWriter, status int, body ...[]byte) {
	n := 0
	for _, b := range body {
		n += len(b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.WriteHeader(status)
	for _, b := range body {
		w.Write(b)
	}
}

// appendSession appends j as encoding/json writes it (no HTML escaping,
// no newline), without reflection: the session is the answer of every
// tell. TestAppendSession holds it to encoding/json's bytes.
func appendSession(b []byte, j *sessionJSON) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, j.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, j.Name)
	b = append(b, `,"algorithm":`...)
	b = appendString(b, j.Algorithm)
	b = append(b, `,"active":`...)
	b = strconv.AppendBool(b, j.Active)
	b = append(b, `,"dimension":`...)
	b = strconv.AppendInt(b, int64(j.Dimension), 10)
	b = append(b, `,"population_size":`...)
	b = strconv.AppendInt(b, int64(j.PopulationSize), 10)
	b = append(b, `,"seed":`...)
	b = strconv.AppendUint(b, j.Seed, 10)
	b = append(b, `,"status":`...)
	b = appendString(b, j.Status)
	b = append(b, `,"stop_reasons":`...)
	b = appendStops(b, j.StopReasons)
	b = append(b, `,"generation":`...)
	b = strconv.AppendInt(b, int64(j.Generation), 10)
	b = append(b, `,"evaluations":`...)
	b = strconv.AppendInt(b, int64(j.Evaluations), 10)
	b = append(b, `,"best":`...)
	if j.Best == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"x":`...)
		b = appendNumsOrNull(b, j.Best.X)
		b = append(b, `,"f":`...)
		b = appendNum(b, float64(j.Best.F))
		b = append(b, `,"generation":`...)
		b = strconv.AppendInt(b, int64(j.Best.Generation), 10)
		b = appendZC(b, j.Best.Z, j.Best.C)
		b = append(b, '}')
	}
	b = appendBestFeasible(b, j)
	b = append(b, `,"mean":`...)
	b = appendNumsOrNull(b, j.Mean)
	b = append(b, `,"sigma":`...)
	b = appendNum(b, float64(j.Sigma))
	b = append(b, `,"stds":`...)
	b = appendNumsOrNull(b, j.Stds)
	h := &j.Hyperparameters
	b = append(b, `,"hyperparameters":{"c1":`...)
	b = appendNum(b, float64(h.C1))
	b = append(b, `,"cmu":`...)
	b = appendNum(b, float64(h.CMu))
	b = append(b, `,"cc":`...)
	b = appendNum(b, float64(h.Cc))
	b = append(b, `,"c_sigma":`...)
	b = appendNum(b, float64(h.CSigma))
	b = append(b, `,"d_sigma":`...)
	b = appendNum(b, float64(h.DSigma))
	b = append(b, `,"mu_w":`...)
	b = appendNum(b, float64(h.MuW))
	if h.Init != "" {
		b = append(b, `,"init":`...)
		b = appendString(b, h.Init)
	}
	if h.SNR != nil {
		b = append(b, `,"snr":`...)
		b = strconv.AppendBool(b, *h.SNR)
	}
	rs := &j.Restarts
	b = append(b, `},"restarts":{"strategy":`...)
	b = appendString(b, rs.Strategy)
	b = append(b, `,"max":`...)
	b = strconv.AppendInt(b, int64(rs.Max), 10)
	if rs.IncPopSize != 0 {
		b = append(b, `,"incpopsize":`...)
		b = appendNum(b, float64(rs.IncPopSize))
	}
	b = append(b, `,"point":`...)
	b = appendString(b, rs.Point)
	if r := rs.Region; r != nil {
		b = append(b, `,"region":{"lower":`...)
		b = appendNumsOrNull(b, r.Lower)
		b = append(b, `,"upper":`...)
		b = appendNumsOrNull(b, r.Upper)
		b = append(b, '}')
	}
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(rs.Count), 10)
	b = append(b, `,"regime":`...)
	b = appendString(b, rs.Regime)
	b = append(b, `,"runs":`...)
	if rs.Runs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, r := range rs.Runs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"generation":`...)
			b = strconv.AppendInt(b, int64(r.Generation), 10)
			b = append(b, `,"population_size":`...)
			b = strconv.AppendInt(b, int64(r.PopulationSize), 10)
			b = append(b, `,"regime":`...)
			b = appendString(b, r.Regime)
			b = append(b, `,"stop_reasons":`...)
			b = appendStops(b, r.StopReasons)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `},"partial":`...)
	if j.Partial == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"indices":[`...)
		for i, k := range j.Partial.Indices {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(k), 10)
		}
		b = append(b, `],"fitness":`...)
		b = appendNumsOrNull(b, j.Partial.Fitness)
		b = appendPartialConstraints(b, j.Partial)
		b = append(b, '}')
	}
	b = append(b, `,"injected":{"waiting":`...)
	b = strconv.AppendInt(b, int64(j.Injected.Waiting), 10)
	b = append(b, `,"in_batch":`...)
	b = strconv.AppendInt(b, int64(j.Injected.InBatch), 10)
	b = append(b, '}')
	b = appendConstraints(b, j)
	b = appendMixed(b, j)
	if len(j.Metadata) > 0 {
		b = append(b, `,"metadata":`...)
		var buf bytes.Buffer
		if err := json.Compact(&buf, j.Metadata); err != nil {
			b = append(b, "null"...) // never stored: metadata is checked on create
		} else {
			b = append(b, buf.Bytes()...)
		}
	}
	b = append(b, `,"created_at":"`...)
	b = j.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","updated_at":"`...)
	b = j.UpdatedAt.AppendFormat(b, time.RFC3339Nano)
	l := &j.Links
	b = append(b, `","links":{"self":`...)
	b = appendString(b, l.Self)
	b = append(b, `,"ask":`...)
	b = appendString(b, l.Ask)
	b = append(b, `,"tell":`...)
	b = appendString(b, l.Tell)
	b = append(b, `,"history":`...)
	b = appendString(b, l.History)
	b = append(b, `,"ui":`...)
	b = appendString(b, l.UI)
	return append(b, "}}"...)
}

func appendStops(b []byte, s []stopJSON) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, r := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, r.Name)
		b = append(b, `,"value":`...)
		b = appendNum(b, float64(r.Value))
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendNumsOrNull(b []byte, v []float64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return appendNums(b, v)
}

// appendString appends s as a JSON string: plain printable ASCII directly,
// anything else as encoding/json escapes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			q, err := marshalJSON(s)
			if err != nil { // a string always encodes
				panic(err)
			}
			return append(b, q[:len(q)-1]...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
