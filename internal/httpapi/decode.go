package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/selfcma/selfcma/internal/session"
)

// The request bodies. Numbers that must be present are pointers, so that a
// missing or null value is told from 0.

type createRequest struct {
	X0              []*float64          `json:"x0"`
	Sigma0          *float64            `json:"sigma0"`
	PopulationSize  int                 `json:"population_size"`
	Algorithm       string              `json:"algorithm"`
	Seed            *uint64             `json:"seed"`
	Bounds          *boundsJSON         `json:"bounds"`
	Hyperparameters *hyperRequest       `json:"hyperparameters"`
	Restarts        *restartsRequest    `json:"restarts"`
	Termination     *terminationJSON    `json:"termination"`
	Name            string              `json:"name"`
	Metadata        json.RawMessage     `json:"metadata"`
	WarmStart       *warmStartJSON      `json:"warm_start"`
	Active          *bool               `json:"active"`
	Mirrored        *bool               `json:"mirrored"`
	MeanRate        *bool               `json:"mean_rate"`
	Constraints     *constraintsRequest `json:"constraints"`
	Integers        [][]*float64        `json:"integers"`
	Categories      []int               `json:"categories"`
}

type boundsJSON struct {
	Lower []*float64 `json:"lower"`
	Upper []*float64 `json:"upper"`
}

type hyperRequest struct {
	Init string `json:"init"`
	SNR  *bool  `json:"snr"`
}

type restartsRequest struct {
	Strategy   string      `json:"strategy"`
	Max        *int        `json:"max"`
	IncPopSize *float64    `json:"incpopsize"`
	Point      string      `json:"point"`
	Region     *boundsJSON `json:"region"`
	SpareBest  *bool       `json:"spare_best_small"`
}

type terminationJSON struct {
	MaxEvaluations int      `json:"max_evaluations"`
	TargetFitness  *float64 `json:"target_fitness"`
	TolFun         *float64 `json:"tol_fun"`
	TolX           *float64 `json:"tol_x"`
	ConditionCov   *float64 `json:"condition_cov"`
	TolUpSigma     *float64 `json:"tol_up_sigma"`
	TolWorse       *float64 `json:"tol_worse"`
	TolWorseDelta  *float64 `json:"tol_worse_delta"`
	NoEffectAxis   *bool    `json:"no_effect_axis"`
	NoEffectCoord  *bool    `json:"no_effect_coord"`
	Stagnation     *bool    `json:"stagnation"`
	EqualFunValues *bool    `json:"equal_fun_values"`

	MaxFailedGenerations *int `json:"max_failed_generations"`
}

type tellRequest struct {
	Generation       *int         `json:"generation"`
	Fitness          []*float64   `json:"fitness"`
	Indices          []*int       `json:"indices"`
	ConstraintValues [][]*float64 `json:"constraint_values"`
}

func invalid(format string, args ...any) error {
	return &session.Error{Code: session.CodeInvalid, Message: fmt.Sprintf(format, args...)}
}

// errTooLarge marks a body over the limit.
var errTooLarge = errors.New("request body too large")

// decodeJSON reads one JSON value into v: checkJSON's refusals first
// (duplicate keys, names in another case, unknown fields, NaN, values of
// the wrong type, trailing data, each with its path), then encoding/json's.
func decodeJSON(r io.Reader, v any) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if err := checkJSON(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
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

// numbers turns a JSON array of numbers into a []float64 (nil for nil);
// null elements are an error.
func numbers(field string, v []*float64) ([]float64, error) {
	if v == nil {
		return nil, nil
	}
	out := make([]float64, len(v))
	for i, p := range v {
		if p == nil {
			return nil, invalid("%s[%d] is null, want a finite number", field, i)
		}
		out[i] = *p
	}
	return out, nil
}

// boxOf turns the box field (bounds, restarts.region) into a
// session.Bounds (nil for nil).
func boxOf(field string, b *boundsJSON) (*session.Bounds, error) {
	if b == nil {
		return nil, nil
	}
	if b.Lower == nil || b.Upper == nil {
		return nil, invalid("%s: lower and upper are both required", field)
	}
	lower, err := numbers(field+".lower", b.Lower)
	if err != nil {
		return nil, err
	}
	upper, err := numbers(field+".upper", b.Upper)
	if err != nil {
		return nil, err
	}
	return &session.Bounds{Lower: lower, Upper: upper}, nil
}

// decodeCreate reads the body of POST /v1/sessions.
func decodeCreate(r io.Reader) (session.CreateParams, error) {
	var req createRequest
	if err := decodeJSON(r, &req); err != nil {
		return session.CreateParams{}, err
	}
	ws, err := warmStartOf(req.WarmStart)
	if err != nil {
		return session.CreateParams{}, err
	}
	mixed := req.Integers != nil || req.Categories != nil || req.Algorithm == session.AlgorithmCatCMA
	if req.X0 == nil && ws == "" && !mixed {
		return session.CreateParams{}, invalid("x0 is required (unless warm_start gives it)")
	}
	if req.Sigma0 == nil && !mixed {
		return session.CreateParams{}, invalid("sigma0 is required")
	}
	x0, err := numbers("x0", req.X0)
	if err != nil {
		return session.CreateParams{}, err
	}
	p := session.CreateParams{
		X0: x0, PopulationSize: req.PopulationSize,
		Algorithm: req.Algorithm, Seed: req.Seed, Name: req.Name, WarmStart: ws, Active: req.Active,
		Mirrored: req.Mirrored,
		MeanRate: req.MeanRate,
	}
	if req.Sigma0 != nil {
		p.Sigma0 = *req.Sigma0
	}
	if p.Integers, p.Categories, err = mixedOf(req.Integers, req.Categories); err != nil {
		return session.CreateParams{}, err
	}
	if p.Bounds, err = boxOf("bounds", req.Bounds); err != nil {
		return session.CreateParams{}, err
	}
	if h := req.Hyperparameters; h != nil {
		p.Init, p.SNR = h.Init, h.SNR
	}
	if p.Constraints, err = constraintsOf(req.Constraints); err != nil {
		return session.CreateParams{}, err
	}
	if rs := req.Restarts; rs != nil {
		p.Restarts = session.Restarts{Strategy: rs.Strategy, Max: rs.Max, IncPopSize: rs.IncPopSize, Point: rs.Point, SpareBestSmall: rs.SpareBest}
		if p.Restarts.Region, err = boxOf("restarts.region", rs.Region); err != nil {
			return session.CreateParams{}, err
		}
	}
	if t := req.Termination; t != nil {
		p.Termination = session.Termination{
			MaxEvaluations: t.MaxEvaluations, TargetFitness: t.TargetFitness,
			TolFun: t.TolFun, TolX: t.TolX, ConditionCov: t.ConditionCov, TolUpSigma: t.TolUpSigma,
			NoEffectAxis: t.NoEffectAxis, NoEffectCoord: t.NoEffectCoord,
			Stagnation: t.Stagnation, EqualFunValues: t.EqualFunValues,
			MaxFailedGenerations: t.MaxFailedGenerations, TolWorse: t.TolWorse, TolWorseDelta: t.TolWorseDelta,
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
//
// The body a client sends every generation, {"generation": g, "fitness":
// [...]} with nothing else, is read by a strict scanner (tellFast) without
// encoding/json's reflection and per-element allocations; anything it does
// not take (a partial tell, with indices, among them), it leaves to
// encoding/json, which also words every error.
// FuzzDecodeTell holds the two to the same values.
func decodeTell(r io.Reader) (session.TellParams, error) {
	body, err := readBody(r)
	if err != nil {
		return session.TellParams{}, err
	}
	if p, ok := tellFast(body); ok {
		return p, nil
	}
	return decodeTellJSON(bytes.NewReader(body))
}

// decodeTellJSON is decodeTell by encoding/json.
func decodeTellJSON(r io.Reader) (session.TellParams, error) {
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
	p := session.TellParams{Generation: *req.Generation, Fitness: make([]float64, len(req.Fitness)), Constraints: constraintValuesOf(req.ConstraintValues)}
	for i, f := range req.Fitness {
		if f == nil {
			p.Fitness[i] = math.NaN()
		} else {
			p.Fitness[i] = *f
		}
	}
	if req.Indices != nil {
		p.Indices = make([]int, len(req.Indices))
		for k, i := range req.Indices {
			if i == nil {
				return session.TellParams{}, invalid("indices[%d] is null, want an integer", k)
			}
			p.Indices[k] = *i
		}
	}
	return p, nil
}

// tellFast reads exactly {"generation": <non-negative integer>, "fitness":
// [<number or null>, ...]} (either order, JSON whitespace anywhere) and
// reports false for anything else, which encoding/json then reads. It is
// the one hand-written decoder: BenchmarkDecodeTell measures it more than
// 10× faster than encoding/json (λ = 10 to 1000) on the tell, the request
// every generation sends.
func tellFast(b []byte) (session.TellParams, bool) {
	var (
		p            session.TellParams
		gen, fit, ok bool
		s            = tellScanner{b: b}
	)
	if !s.expect('{') {
		return session.TellParams{}, false
	}
	for {
		s.skip()
		switch {
		case !gen && bytes.HasPrefix(b[s.i:], generationKey):
			s.i += len(generationKey)
			gen = true
			if ok = s.expect(':'); ok {
				p.Generation, ok = s.generation()
			}
		case !fit && bytes.HasPrefix(b[s.i:], fitnessKey):
			s.i += len(fitnessKey)
			fit = true
			if ok = s.expect(':'); ok {
				p.Fitness, ok = s.fitness()
			}
		default:
			ok = false
		}
		if !ok {
			return session.TellParams{}, false
		}
		s.skip()
		if s.i < len(b) && b[s.i] == ',' {
			s.i++
			continue
		}
		if !s.expect('}') || !gen || !fit {
			return session.TellParams{}, false
		}
		if s.skip(); s.i != len(b) {
			return session.TellParams{}, false
		}
		return p, true
	}
}

var (
	generationKey = []byte(`"generation"`)
	fitnessKey    = []byte(`"fitness"`)
	nullLiteral   = []byte("null")
)

// tellScanner reads a tell's body for tellFast: b[i:] is what is left.
type tellScanner struct {
	b []byte
	i int
}

func (s *tellScanner) skip() { s.i = skipSpace(s.b, s.i) }

// expect skips space and reports whether c comes next, consuming it.
func (s *tellScanner) expect(c byte) bool {
	s.skip()
	ok := s.i < len(s.b) && s.b[s.i] == c
	s.i++
	return ok
}

// generation reads a non-negative integer.
func (s *tellScanner) generation() (int, bool) {
	s.skip()
	b, i, j := s.b, s.i, s.i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i || j-i > 15 || (b[i] == '0' && j-i > 1) {
		return 0, false // no digits, a leading zero, or more digits than any generation: encoding/json judges
	}
	g, err := strconv.Atoi(string(b[i:j]))
	if err != nil {
		return 0, false
	}
	s.i = j
	return g, true
}

// fitness reads [<number or null>, ...], null as NaN.
func (s *tellScanner) fitness() ([]float64, bool) {
	if !s.expect('[') {
		return nil, false
	}
	f := make([]float64, 0, 16)
	if s.skip(); s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return f, true
	}
	for {
		v, ok := s.number()
		if !ok {
			return nil, false
		}
		f = append(f, v)
		if s.skip(); s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
			continue
		}
		return f, s.expect(']')
	}
}

// number reads a JSON number, or null as NaN.
func (s *tellScanner) number() (float64, bool) {
	s.skip()
	if bytes.HasPrefix(s.b[s.i:], nullLiteral) {
		s.i += len(nullLiteral)
		return math.NaN(), true
	}
	j := jsonNumberEnd(s.b, s.i)
	if j < 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(s.b[s.i:j]), 64)
	if err != nil {
		return 0, false
	}
	s.i = j
	return v, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonNumberEnd returns the end of the JSON number at b[i:], or -1 if
// there is none: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func jsonNumberEnd(b []byte, i int) int {
	digits := func() int {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1
		}
	}
	return i
}
