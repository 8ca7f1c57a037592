package httpapi

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"
)

// The strict reading of bodies: every refusal is 400 invalid, naming the
// path of the value and, where it can, what to send instead.
func TestStrictJSON(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // in the message
	}{
		{"duplicate key", `{"x0": [1], "sigma0": 1, "sigma0": 2}`, []string{"sigma0", "given twice"}},
		{"duplicate nested key", `{"x0": [1], "sigma0": 1, "termination": {"tol_x": 1, "tol_x": 2}}`, []string{"termination.tol_x", "twice"}},
		{"duplicate key in metadata", `{"x0": [1], "sigma0": 1, "metadata": {"a": {"b": 1, "b": 2}}}`, []string{"metadata.a.b", "twice"}},
		{"case", `{"X0": [1], "sigma0": 1}`, []string{"X0", "case-sensitive", `want "x0"`}},
		{"nested case", `{"x0": [1], "sigma0": 1, "termination": {"Tol_Fun": 1}}`, []string{"termination.Tol_Fun", `want "tol_fun"`}},
		{"unknown nested", `{"x0": [1], "sigma0": 1, "termination": {"ftarget": 1}}`, []string{"termination.ftarget", "did you mean target_fitness?"}},
		{"unknown typo", `{"x0": [1], "sigma0": 1, "populaton_size": 4}`, []string{"populaton_size", "did you mean population_size?"}},
		{"unknown far", `{"x0": [1], "sigma0": 1, "zzzzzzzz": 4}`, []string{`unknown field "zzzzzzzz"`}},
		{"NaN", `{"x0": [1, NaN], "sigma0": 1}`, []string{"x0[1]", "NaN", "null"}},
		{"Infinity", `{"x0": [1], "sigma0": Infinity}`, []string{"sigma0", "Infinity", "null"}},
		{"minus Infinity", `{"x0": [-Infinity], "sigma0": 1}`, []string{"x0[0]", "-Infinity", "null"}},
		{"type deep", `{"x0": [1], "sigma0": 1, "bounds": {"lower": [0], "upper": ["2"]}}`, []string{"bounds.upper[0]", "want a finite number"}},
		{"bool for number", `{"x0": [1], "sigma0": 1, "termination": {"tol_fun": true}}`, []string{"termination.tol_fun", "got a boolean"}},
		{"int fraction", `{"x0": [1], "sigma0": 1, "restarts": {"max": 1.5}}`, []string{"restarts.max", "want an integer"}},
		{"deep nesting", `{"x0": [1], "sigma0": 1, "metadata": {"a": ` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}}`, []string{"nested deeper"}},
		{"syntax path", `{"x0": [1], "sigma0": 1, "bounds": {"lower": [1,]}}`, []string{"bounds.lower", "malformed JSON"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeCreate(strings.NewReader(tc.body))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: want %q in it", err, w)
				}
			}
		})
	}
	// The tell's slow path too.
	for body, want := range map[string]string{
		`{"generation": 1, "fitness": [1], "Indices": [0]}`:        `want "indices"`,
		`{"generation": 1, "fitness": [1, NaN], "indices": [0,1]}`: "fitness[1]: NaN",
		`{"generation": 1, "generation": 2, "fitness": [1]}`:       "generation: the key",
		`{"generation": 1, "fitness": [1], "fitnes": [1]}`:         "did you mean fitness?",
	} {
		if _, err := decodeTell(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q in it", body, err, want)
		}
	}
}

func TestJSONContentType(t *testing.T) {
	for ct, want := range map[string]bool{
		"": false, "application/json": true, "application/json; charset=utf-8": true, "Application/JSON": true,
		"application/merge-patch+json": true, "application/x-www-form-urlencoded": false, "text/plain": false,
		"text/json": false, "application/jsonx": false, ";;": false,
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"x0": [1]}`))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		if got := jsonBody(r); got != want {
			t.Errorf("Content-Type %q: %v, want %v", ct, got, want)
		}
	}
	// No Content-Type is no claim that a body is JSON; without a body there
	// is nothing to claim.
	if r := httptest.NewRequest("POST", "/", bytes.NewReader(nil)); !jsonBody(r) {
		t.Error("no body, no Content-Type: refused")
	}
}
