package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
)

// decodeErrorOK reports whether err is one the handlers map to a 4xx.
func decodeErrorOK(err error) bool {
	var se *session.Error
	return errors.Is(err, errTooLarge) || errors.As(err, &se) && se.Code != session.CodeInternal && se.Message != ""
}

func FuzzDecodeCreate(f *testing.F) {
	for _, s := range []string{
		`{"x0": [1, 2], "sigma0": 0.5}`,
		`{"x0": [1], "sigma0": 1, "population_size": 10, "algorithm": "cma-es", "seed": 18446744073709551615}`,
		`{"x0": [0.5], "sigma0": 1, "bounds": {"lower": [0], "upper": [1]}, "hyperparameters": {"init": "uniform"}}`,
		`{"x0": [1], "sigma0": 1, "restarts": {"strategy": "ipop", "max": 3}, "termination": {"max_evaluations": 100, "target_fitness": -1, "tol_fun": 0, "stagnation": false}}`,
		`{"x0": [1], "sigma0": 1, "name": "n", "metadata": {"a": [1, {"b": null}]}}`,
		`{"x0": [1], "sigma0": 1, "active": true, "restarts": {"strategy": "bipop", "max": 2, "incpopsize": 1.5, "point": "uniform", "region": {"lower": [0], "upper": [2]}}}`,
		`{"x0": [1], "sigma0": 1, "active": null, "restarts": {"region": {"lower": [null], "upper": []}}}`,
		`{"x0": [1, 2], "sigma0": 1, "mirrored": true, "algorithm": "self-cma-es"}`, `{"x0": [1], "sigma0": 1, "mirrored": 1}`,
		`{"x0": [1], "sigma0": 1, "sigma0": 2}`, `{"X0": [1], "sigma0": 1}`, `{"x0": [NaN], "sigma0": 1}`, `{"x0": [-Infinity], "sigma0": 1}`,
		`{"x0": [1], "sigma0": 1, "termination": {"ftarget": 1}}`, `{"x0": [1], "sigma0": 1, "metadata": {"a": 1, "a": 2}}`, `{"x0": [1], "sigma0": 1, "metadata": [[[[[]]]]]}`,
		`{"sigma0": 1, "warm_start": {"session": "s"}, "termination": {"max_failed_generations": -1}}`, `{"sigma0": 1, "warm_start": {}}`,
		`{"x0": [1e999], "sigma0": 1}`, `{"x0": [null]}`, `{"x0": "x"}`, `[1]`, `null`, ``, `{"a":1}`, `{"x0": [1], "sigma0": 1} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeCreate(bytes.NewReader(body))
		if err != nil {
			if !decodeErrorOK(err) {
				t.Fatalf("error %v is not a client error", err)
			}
			return
		}
		if !strictlyValid(body) {
			t.Fatalf("accepted %q, with a key twice or in another case", body)
		}
		if (p.X0 == nil && p.WarmStart == "") || p.Sigma0 != p.Sigma0 {
			t.Fatalf("accepted without x0 or warm_start, or with sigma0 NaN: %+v", p)
		}
		for _, v := range p.X0 {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted x0 %v", p.X0)
			}
		}
		if p.Bounds != nil && (p.Bounds.Lower == nil || p.Bounds.Upper == nil) {
			t.Fatalf("accepted bounds %+v", p.Bounds)
		}
		if r := p.Restarts.Region; r != nil && (r.Lower == nil || r.Upper == nil) {
			t.Fatalf("accepted restarts.region %+v", r)
		}
		if p.Metadata != nil && (!json.Valid(p.Metadata) || p.Metadata[0] != '{') {
			t.Fatalf("accepted metadata %q", p.Metadata)
		}
	})
}

func FuzzDecodeTell(f *testing.F) {
	for _, s := range []string{
		`{"generation": 0, "fitness": [1, 2.5, null, -3e-300]}`,
		`{"generation": 12, "fitness": []}`,
		`{"generation": -1, "fitness": [1]}`,
		`{"generation": 1, "fitness": ["NaN"]}`, `{"generation": 1, "fitness": [1e999]}`,
		`{"generation": 1.5, "fitness": [1]}`, `{"fitness": [1]}`, `{"generation": 1}`, `{`, `{"generation": 0, "fitness": [1], "x": 0}`,
		` { "fitness" : [ -0 , 0.5e+3 , null ] , "generation" : 7 } `, `{"generation":0,"generation":1,"fitness":[]}`,
		`{"generation":01,"fitness":[1]}`, `{"generation":1,"fitness":[01]}`, `{"generation":1,"fitness":[1.]}`,
		`{"Generation":1,"fitness":[1]}`, `{"generation":1,"fitness":[1,]}`, `{"generation":1,"fitness":[1e-400, 4.9e-324]}`,
		`{"generation":3,"indices":[4,0],"fitness":[1,null]}`, `{"generation":3,"indices":[],"fitness":[]}`,
		`{"generation":3,"indices":[0],"Fitness":[1]}`, `{"generation":3,"indices":[0],"fitness":[NaN]}`, `{"generation":3,"indices":[0],"indices":[1],"fitness":[1]}`,
		`{"generation":3,"indices":[null],"fitness":[1]}`, `{"generation":3,"indices":[1.5],"fitness":[1]}`, `{"generation":3,"indices":null,"fitness":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeTell(bytes.NewReader(body))
		// The fast scanner takes only what encoding/json takes, as it does.
		if fast, ok := tellFast(body); ok {
			slow, err := decodeTellJSON(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("the scanner took %q, encoding/json refuses it: %v", body, err)
			}
			if fast.Generation != slow.Generation || len(fast.Fitness) != len(slow.Fitness) || fast.Indices != nil || slow.Indices != nil {
				t.Fatalf("%q: scanner %+v, encoding/json %+v", body, fast, slow)
			}
			for i := range fast.Fitness {
				if math.Float64bits(fast.Fitness[i]) != math.Float64bits(slow.Fitness[i]) {
					t.Fatalf("%q: fitness[%d] %v by the scanner, %v by encoding/json", body, i, fast.Fitness[i], slow.Fitness[i])
				}
			}
		}
		if err != nil {
			if !decodeErrorOK(err) {
				t.Fatalf("error %v is not a client error", err)
			}
			return
		}
		if !strictlyValid(body) {
			t.Fatalf("accepted %q, with a key twice or in another case", body)
		}
		if p.Generation < 0 || p.Fitness == nil {
			t.Fatalf("accepted %+v", p)
		}
		// What was accepted goes out and comes back the same: NaN as null.
		indices := ""
		if p.Indices != nil {
			b, _ := json.Marshal(p.Indices)
			indices = `,"indices":` + string(b)
		}
		again, err := decodeTell(strings.NewReader(`{"generation":` + string(appendNum(nil, float64(p.Generation))) +
			`,"fitness":` + string(appendNums(nil, p.Fitness)) + indices + `}`))
		if err != nil || again.Generation != p.Generation || len(again.Fitness) != len(p.Fitness) || !slices.Equal(again.Indices, p.Indices) || (again.Indices == nil) != (p.Indices == nil) {
			t.Fatalf("round trip of %+v: %+v, %v", p, again, err)
		}
		for i, v := range p.Fitness {
			if math.IsInf(v, 0) || math.Float64bits(v) != math.Float64bits(again.Fitness[i]) && !(math.IsNaN(v) && math.IsNaN(again.Fitness[i])) {
				t.Fatalf("fitness[%d] = %v came back as %v", i, v, again.Fitness[i])
			}
		}
	})
}

// strictlyValid reports whether body is JSON whose objects have no key
// twice and whose top-level keys are lower case: what the strict reading
// lets through. It reads encoding/json's tokens, apart from checkJSON.
func strictlyValid(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []map[string]bool // nil for an array
	inObject := func() bool { return len(stack) > 0 && stack[len(stack)-1] != nil }
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return err == io.EOF
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, map[string]bool{})
			expectKey = true
		case json.Delim('['):
			stack = append(stack, nil)
			expectKey = false
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			expectKey = inObject()
		default:
			if k, ok := tok.(string); ok && expectKey {
				keys := stack[len(stack)-1]
				if keys[k] || len(stack) == 1 && k != strings.ToLower(k) {
					return false
				}
				keys[k] = true
				expectKey = false
				continue
			}
			expectKey = inObject()
		}
	}
}
