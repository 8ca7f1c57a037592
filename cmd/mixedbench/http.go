package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/selfcma/selfcma/internal/constraints"
	"github.com/selfcma/selfcma/internal/mixedfn"
)

// solveConstrainedHTTP is solveConstrained through a constrained session
// of the server at base: the same CMA-ES configuration (cma-es, no
// restarts, no termination criterion), the f and g values told over HTTP,
// the session ranking by its augmented Lagrangian. It must give the
// in-process run's result exactly (TestConstrainedOverHTTP).
func solveConstrainedHTTP(base string, p mixedfn.Constrained, seed uint64, maxEvals int, active bool) (Run, error) {
	c := &httpClient{base: base}
	off := 0.0
	var s struct {
		ID   string `json:"id"`
		Next *struct {
			Generation int         `json:"generation"`
			Candidates [][]float64 `json:"candidates"`
		} `json:"next"`
	}
	create := map[string]any{"x0": p.X0, "sigma0": 1, "seed": seed, "algorithm": "cma-es", "active": active,
		"mirrored":    false, // every point drawn, as the in-process run and pycma's reference
		"restarts":    map[string]any{"strategy": "none"},
		"constraints": map[string]any{"count": p.M},
		"termination": map[string]any{"tol_fun": off, "tol_x": off, "condition_cov": off, "tol_up_sigma": off,
			"no_effect_axis": false, "no_effect_coord": false, "stagnation": false, "equal_fun_values": false}}
	if err := c.do("POST", "/v1/sessions", create, 201, &s); err != nil {
		return Run{}, err
	}
	defer c.do("DELETE", "/v1/sessions/"+s.ID, nil, 204, nil)
	if err := c.do("GET", "/v1/sessions/"+s.ID+"/ask", nil, 200, &s.Next); err != nil {
		return Run{}, err
	}
	r := Run{Impl: "go-http", Problem: fmt.Sprintf("%s-%d", p.Name, p.N), Seed: int(seed), Best: math.Inf(1)}
	var best []float64
	for r.Evals < maxEvals {
		b := s.Next
		if b == nil {
			return r, fmt.Errorf("the session stopped at %d evaluations", r.Evals)
		}
		f, g := make([]float64, len(b.Candidates)), make([][]float64, len(b.Candidates))
		for k, x := range b.Candidates {
			f[k], g[k] = p.F(x), p.G(x)
			r.Evals++
			if constraints.Feasible(g[k]) && f[k]-p.FOpt < r.Best {
				r.Best, best = f[k]-p.FOpt, slices.Clone(x)
			}
			if r.Best <= mixedfn.ConstrainedTarget {
				r.Reached = true
				r.Feasible = constraints.Feasible(p.G(best))
				return r, nil
			}
		}
		s.Next = nil
		tell := map[string]any{"generation": b.Generation, "fitness": f, "constraint_values": g}
		if err := c.do("POST", "/v1/sessions/"+s.ID+"/tell?next=true", tell, 200, &s); err != nil {
			return r, err
		}
	}
	if best != nil {
		r.Feasible = constraints.Feasible(p.G(best))
	}
	return r, nil
}

type httpClient struct{ base string }

var httpc = &http.Client{Timeout: time.Minute}

// do sends body as JSON and decodes the answer into out, which must come
// with status want.
func (c *httpClient) do(method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}
