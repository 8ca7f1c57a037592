package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"

	"github.com/selfcma/selfcma/internal/session"
)

// The request bodies. Numbers that must be present are pointers, so that a
// missing or null value is told from 0.

type createRequest struct {
	X0              []*float64       `json:"x0"`
	Sigma0          *float64         `json:"sigma0"`
	PopulationSize  int              `json:"population_size"`
	Algorithm       string           `json:"algorithm"`
	Seed            *uint64          `json:"seed"`
	Bounds          *boundsJSON      `json:"bounds"`
	Hyperparameters *hyperRequest    `json:"hyperparameters"`
	Restarts        *restartsRequest `json:"restarts"`
	Termination     *terminationJSON `json:"termination"`
	Name            string           `json:"name"`
	Metadata        json.RawMessage  `json:"metadata"`
}

type boundsJSON struct {
	Lower []*float64 `json:"lower"`
	Upper []*float64 `json:"upper"`
}

type hyperRequest struct {
	Init string `json:"init"`
}

type restartsRequest struct {
	Strategy string `json:"strategy"`
	Max      *int   `json:"max"`
}

type terminationJSON struct {
	MaxEvaluations int      `json:"max_evaluations"`
	TargetFitness  *float64 `json:"target_fitness"`
	TolFun         *float64 `json:"tol_fun"`
	TolX           *float64 `json:"tol_x"`
	ConditionCov   *float64 `json:"condition_cov"`
	TolUpSigma     *float64 `json:"tol_up_sigma"`
	NoEffectAxis   *bool    `json:"no_effect_axis"`
	NoEffectCoord  *bool    `json:"no_effect_coord"`
	Stagnation     *bool    `json:"stagnation"`
	EqualFunValues *bool    `json:"equal_fun_values"`
}

type tellRequest struct {
	Generation *int       `json:"generation"`
	Fitness    []*float64 `json:"fitness"`
}

func invalid(format string, args ...any) error {
	return &session.Error{Code: session.CodeInvalid, Message: fmt.Sprintf(format, args...)}
}

// errTooLarge marks a body over the limit.
var errTooLarge = errors.New("request body too large")

// decodeJSON reads one JSON value into v: unknown fields, trailing data and
// values of the wrong type are errors with messages for the client.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return errTooLarge
		}
		return invalid("the body has data after the JSON object")
	}
	return nil
}

func jsonError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		mb  *http.MaxBytesError
	)
	switch {
	case errors.As(err, &mb):
		return errTooLarge
	case errors.Is(err, io.EOF):
		return invalid("the body is empty, want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("the body is truncated JSON")
	case errors.As(err, &syn):
		return invalid("malformed JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the body"
		}
		return invalid("%s: got %s, want %s", field, typ.Value, jsonType(typ.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return invalid("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return invalid("malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonType names what a Go type reads from JSON.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a finite number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an unsigned integer"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// numbers turns a JSON array of numbers into a []float64; null elements are
// an error.
func numbers(field string, v []*float64) ([]float64, error) {
	out := make([]float64, len(v))
	for i, p := range v {
		if p == nil {
			return nil, invalid("%s[%d] is null, want a finite number", field, i)
		}
		out[i] = *p
	}
	return out, nil
}

// decodeCreate reads the body of POST /v1/sessions.
func decodeCreate(r io.Reader) (session.CreateParams, error) {
	var req createRequest
	if err := decodeJSON(r, &req); err != nil {
		return session.CreateParams{}, err
	}
	if req.X0 == nil {
		return session.CreateParams{}, invalid("x0 is required")
	}
	if req.Sigma0 == nil {
		return session.CreateParams{}, invalid("sigma0 is required")
	}
	x0, err := numbers("x0", req.X0)
	if err != nil {
		return session.CreateParams{}, err
	}
	p := session.CreateParams{
		X0: x0, Sigma0: *req.Sigma0, PopulationSize: req.PopulationSize,
		Algorithm: req.Algorithm, Seed: req.Seed, Name: req.Name,
	}
	if b := req.Bounds; b != nil {
		if b.Lower == nil || b.Upper == nil {
			return session.CreateParams{}, invalid("bounds need lower and upper")
		}
		p.Bounds = new(session.Bounds)
		if p.Bounds.Lower, err = numbers("bounds.lower", b.Lower); err != nil {
			return session.CreateParams{}, err
		}
		if p.Bounds.Upper, err = numbers("bounds.upper", b.Upper); err != nil {
			return session.CreateParams{}, err
		}
	}
	if h := req.Hyperparameters; h != nil {
		p.Init = h.Init
	}
	if rs := req.Restarts; rs != nil {
		p.Restarts = session.Restarts{Strategy: rs.Strategy, Max: rs.Max}
	}
	if t := req.Termination; t != nil {
		p.Termination = session.Termination{
			MaxEvaluations: t.MaxEvaluations, TargetFitness: t.TargetFitness,
			TolFun: t.TolFun, TolX: t.TolX, ConditionCov: t.ConditionCov, TolUpSigma: t.TolUpSigma,
			NoEffectAxis: t.NoEffectAxis, NoEffectCoord: t.NoEffectCoord,
			Stagnation: t.Stagnation, EqualFunValues: t.EqualFunValues,
		}
	}
	if m := req.Metadata; m != nil && string(m) != "null" {
		if m[0] != '{' {
			return session.CreateParams{}, invalid("metadata: want a JSON object")
		}
		p.Metadata = m
	}
	return p, nil
}

// decodeTell reads the body of POST /v1/sessions/{id}/tell: null stands for
// a failed evaluation and becomes NaN, which the engine ranks worst.
func decodeTell(r io.Reader) (session.TellParams, error) {
	var req tellRequest
	if err := decodeJSON(r, &req); err != nil {
		return session.TellParams{}, err
	}
	if req.Generation == nil {
		return session.TellParams{}, invalid("generation is required")
	}
	if req.Fitness == nil {
		return session.TellParams{}, invalid("fitness is required")
	}
	if *req.Generation < 0 {
		return session.TellParams{}, &session.Error{Code: session.CodeOutOfRange, Message: fmt.Sprintf("generation %d, want at least 0", *req.Generation)}
	}
	p := session.TellParams{Generation: *req.Generation, Fitness: make([]float64, len(req.Fitness))}
	for i, f := range req.Fitness {
		if f == nil {
			p.Fitness[i] = math.NaN()
		} else {
			p.Fitness[i] = *f
		}
	}
	return p, nil
}
