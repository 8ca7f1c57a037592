package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
)

type cell struct {
	runs, ok int
	evals    []int
}

type key struct {
	dim, fn int
	alg     string
}

// compareFiles reads runs (one JSON object a line) and prints a Markdown
// table: per dimension and function, each algorithm's successes and
// median [min–max] evaluations to the target, and its median over ref's.
func compareFiles(files []string, ref string, out io.Writer) error {
	cells := map[key]*cell{}
	var algs []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r result
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return fmt.Errorf("%s: %w", name, err)
			}
			k := key{r.Dimension, r.Function, r.Algorithm}
			c := cells[k]
			if c == nil {
				c = &cell{}
				cells[k] = c
			}
			if !slices.Contains(algs, r.Algorithm) {
				algs = append(algs, r.Algorithm)
			}
			c.runs++
			if r.EvalsToTarget != nil {
				c.ok++
				c.evals = append(c.evals, *r.EvalsToTarget)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
	}
	sort.Strings(algs)
	var rows []key
	for k := range cells {
		if k.alg == algs[0] {
			rows = append(rows, k)
		}
	}
	sort.Slice(rows, func(a, b int) bool {
		if rows[a].dim != rows[b].dim {
			return rows[a].dim < rows[b].dim
		}
		return rows[a].fn < rows[b].fn
	})
	fmt.Fprint(out, "| n | f |")
	for _, a := range algs {
		fmt.Fprintf(out, " %s: ok, median [min–max] | / %s |", a, ref)
	}
	fmt.Fprint(out, "\n|---|---|")
	for range algs {
		fmt.Fprint(out, "---|---|")
	}
	fmt.Fprintln(out)
	for _, r := range rows {
		fmt.Fprintf(out, "| %d | f%d |", r.dim, r.fn)
		refMed := math.NaN()
		if c := cells[key{r.dim, r.fn, ref}]; c != nil && c.ok > 0 {
			refMed = median(c.evals)
		}
		for _, a := range algs {
			c := cells[key{r.dim, r.fn, a}]
			if c == nil {
				fmt.Fprint(out, " – | – |")
				continue
			}
			if c.ok == 0 {
				fmt.Fprintf(out, " 0/%d | – |", c.runs)
				continue
			}
			m := median(c.evals)
			ratio := "–"
			if !math.IsNaN(refMed) {
				ratio = fmt.Sprintf("%.2f", m/refMed)
			}
			fmt.Fprintf(out, " %d/%d, %.0f [%d–%d] | %s |", c.ok, c.runs, m, slices.Min(c.evals), slices.Max(c.evals), ratio)
		}
		fmt.Fprintln(out)
	}
	return nil
}

func median(v []int) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return float64(s[m])
	}
	return float64(s[m-1]+s[m]) / 2
}
