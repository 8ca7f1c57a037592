package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/store/bolt"
)

// A client's ask/tell loop over HTTP, with net/http and encoding/json
// only: create a session, then ask for the candidates, evaluate them and
// tell their values in the same order until the session stops. (The
// server here is the handler of the service on a test listener; cmd/server
// serves the same handler.)
func Example_clientLoop() {
	dir, err := os.MkdirTemp("", "selfcma-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := bolt.Open(filepath.Join(dir, "sessions.db"), &bolt.Options{NoSync: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Manager: session.NewManager(st, session.Options{})}))
	defer srv.Close()

	var s struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		Generation  int    `json:"generation"`
		StopReasons []struct {
			Name string `json:"name"`
		} `json:"stop_reasons"`
		Best struct {
			F float64 `json:"f"`
		} `json:"best"`
	}
	post(srv.URL+"/v1/sessions", map[string]any{
		"x0": []float64{1, 1, 1, 1}, "sigma0": 0.5, "seed": 42, "algorithm": "cma-es",
		"termination": map[string]any{"target_fitness": 1e-8},
	}, &s)
	for s.Status == "running" {
		var batch struct {
			Generation int         `json:"generation"`
			Candidates [][]float64 `json:"candidates"`
		}
		get(srv.URL+"/v1/sessions/"+s.ID+"/ask", &batch)
		fitness := make([]float64, len(batch.Candidates))
		for i, x := range batch.Candidates {
			for _, v := range x {
				fitness[i] += v * v // the sphere
			}
		}
		post(srv.URL+"/v1/sessions/"+s.ID+"/tell", map[string]any{"generation": batch.Generation, "fitness": fitness}, &s)
	}
	fmt.Println("stopped on", s.StopReasons[0].Name, "at generation", s.Generation)
	fmt.Println("best f below the target:", s.Best.F <= 1e-8)
	// Output:
	// stopped on target_fitness at generation 55
	// best f below the target: true
}

// post sends v as JSON and decodes the answer into out.
func post(url string, v, out any) {
	body, err := json.Marshal(v)
	if err != nil {
		log.Fatal(err)
	}
	r, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	decode(r, out)
}

// get decodes the answer of a GET into out.
func get(url string, out any) {
	r, err := http.Get(url)
	if err != nil {
		log.Fatal(err)
	}
	decode(r, out)
}

// decode decodes a 2xx answer into out; any other status is fatal, with
// the error the server sent.
func decode(r *http.Response, out any) {
	defer r.Body.Close()
	if r.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code, Message string }
		}
		json.NewDecoder(r.Body).Decode(&e)
		log.Fatalf("%s: %d %s: %s", r.Request.URL, r.StatusCode, e.Error.Code, e.Error.Message)
	}
	if err := json.NewDecoder(r.Body).Decode(out); err != nil {
		log.Fatal(err)
	}
}
