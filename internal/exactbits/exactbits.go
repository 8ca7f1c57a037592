// Package exactbits writes values as JSON trees in which every float64 is
// the 16 hex digits of its bits, and compares such trees: for the tests
// that check a stored state or file continues bit for bit after an upgrade
// (internal/upgrade and the upgrade tests of cmaes and selfcma). NaN, ±Inf
// and −0 survive, and a comparison is exact.
package exactbits

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
)

// Of turns v into JSON values: every float64 the hex of its bits, uint64 a
// decimal string, time.Time RFC 3339, []byte a string, a gonum matrix its
// rows, a rand.PCG its MarshalBinary, structs maps of their exported
// fields, and a []float64 a []string.
func Of(v any) any { return of(reflect.ValueOf(v)) }

func of(v reflect.Value) any {
	if x, ok := special(v); ok {
		return x
	}
	switch v.Kind() {
	case reflect.Invalid:
		return nil
	case reflect.Float64, reflect.Float32:
		return fmt.Sprintf("%016x", math.Float64bits(v.Float()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprint(v.Uint())
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return of(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			if v.IsNil() {
				return nil
			}
			return string(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = of(v.Index(i))
		}
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Float64 {
			s := make([]string, len(out))
			for i, x := range out {
				s[i] = x.(string)
			}
			return s
		}
		return out
	case reflect.Map:
		out := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			out[fmt.Sprint(it.Key().Interface())] = of(it.Value())
		}
		return out
	case reflect.Struct:
		if tm, ok := v.Interface().(time.Time); ok {
			return tm.UTC().Format(time.RFC3339Nano)
		}
		out := map[string]any{}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out[f.Name] = of(v.Field(i))
			}
		}
		return out
	}
	panic(fmt.Sprintf("exactbits: %v", v.Type()))
}

// special turns the values whose state is in unexported fields: a gonum
// matrix (its rows) and a rand.PCG (its MarshalBinary).
func special(v reflect.Value) (any, bool) {
	if !v.IsValid() || !v.CanInterface() || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, false
	}
	switch x := v.Interface().(type) {
	case mat.Matrix:
		r, _ := x.Dims()
		rows := make([][]float64, r)
		for i := range rows {
			rows[i] = mat.Row(nil, i, x)
		}
		return of(reflect.ValueOf(rows)), true
	case rand.PCG:
		b, err := x.MarshalBinary()
		if err != nil {
			panic(err) // PCG.MarshalBinary never fails
		}
		return string(b), true
	}
	return nil, false
}

// Floats reads back the float64s that Of wrote as hex.
func Floats(tb testing.TB, hex []string) []float64 {
	tb.Helper()
	f := make([]float64, len(hex))
	for i, h := range hex {
		var u uint64
		if _, err := fmt.Sscanf(h, "%x", &u); err != nil {
			tb.Fatalf("value %q: %v", h, err)
		}
		f[i] = math.Float64frombits(u)
	}
	return f
}

// JSON is v as indented JSON (a fixture's file).
func JSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// MaxDiffs is how many differences a Diff reports; it counts the others.
const MaxDiffs = 20

// Diff reports the differences of trees as errors of a test.
type Diff struct {
	tb testing.TB
	n  int
}

// NewDiff returns a Diff that reports to tb.
func NewDiff(tb testing.TB) *Diff { return &Diff{tb: tb} }

// Subset reports where got (decoded from JSON) differs from want: every
// key of a wanted object must be in got with an equal value (got may have
// more: a later version may expose more), lists have equal lengths, values
// are equal (floats as their bits). path names the trees in the reports.
func (d *Diff) Subset(path string, want, got any) {
	d.tb.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			d.errorf("%s: got %v, want an object", path, got)
			return
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				d.errorf("%s.%s: missing", path, k)
				continue
			}
			d.Subset(path+"."+k, wv, gv)
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			d.errorf("%s: got %v, want %d values", path, got, len(w))
			return
		}
		for i := range w {
			d.Subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])
		}
	default:
		if !reflect.DeepEqual(want, got) {
			d.errorf("%s: got %v, want %v", path, got, want)
		}
	}
}

func (d *Diff) errorf(format string, args ...any) {
	d.tb.Helper()
	if d.n++; d.n <= MaxDiffs {
		d.tb.Errorf(format, args...)
	}
}

// Done reports how many differences were not shown.
func (d *Diff) Done() {
	d.tb.Helper()
	if d.n > MaxDiffs {
		d.tb.Errorf("and %d more differences", d.n-MaxDiffs)
	}
}

// Same reports whether a and b hold the same float64s bit for bit (so
// NaN equals the same NaN, and −0 differs from +0).
func Same(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
