package binenc

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// negZero is −0: the literal -0.0 is +0 in Go.
var negZero = math.Copysign(0, -1)

func TestRoundTrip(t *testing.T) {
	nan := math.Float64frombits(0x7ff8000000000abc) // a NaN with a payload
	w := NewWriter("tag", 3)
	w.Int(-7)
	w.Uint64(math.MaxUint64)
	w.Float(nan)
	w.Float(math.Inf(-1))
	w.Bool(true)
	w.String("héllo")
	w.Bytes([]byte{0, 1, 2})
	w.Floats([]float64{1.5, negZero, math.SmallestNonzeroFloat64})
	w.Ints([]int{3, -1})
	blob := w.Finish()

	r, err := NewReader(blob, "tag", 3)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Int(); v != -7 {
		t.Errorf("Int = %d", v)
	}
	if v := r.Uint64(); v != math.MaxUint64 {
		t.Errorf("Uint64 = %d", v)
	}
	if v := r.Float(); math.Float64bits(v) != math.Float64bits(nan) {
		t.Errorf("NaN payload lost: %x", math.Float64bits(v))
	}
	if v := r.Float(); !math.IsInf(v, -1) {
		t.Errorf("Float = %v", v)
	}
	if !r.Bool() || r.String() != "héllo" || !slices.Equal(r.Bytes(), []byte{0, 1, 2}) {
		t.Error("bool, string or bytes differ")
	}
	fs := r.Floats()
	if len(fs) != 3 || fs[0] != 1.5 || math.Float64bits(fs[1]) != math.Float64bits(negZero) || fs[2] != math.SmallestNonzeroFloat64 {
		t.Errorf("Floats = %v", fs)
	}
	if !slices.Equal(r.Ints(), []int{3, -1}) {
		t.Error("Ints differ")
	}
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
}

func TestRejects(t *testing.T) {
	w := NewWriter("tag", 1)
	w.Floats([]float64{1, 2, 3})
	blob := w.Finish()
	tests := map[string]struct {
		blob    []byte
		magic   string
		version uint32
	}{
		"empty":         {nil, "tag", 1},
		"truncated":     {blob[:len(blob)-1], "tag", 1},
		"flipped":       {append(append([]byte{}, blob[:10]...), append([]byte{blob[10] ^ 1}, blob[11:]...)...), "tag", 1},
		"other tag":     {blob, "tog", 1},
		"other version": {blob, "tag", 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := NewReader(tt.blob, tt.magic, tt.version); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
	// A length beyond the blob, and trailing bytes, are errors too.
	r, _ := NewReader(blob, "tag", 1)
	_ = r.Floats()
	_ = r.Floats()
	if err := r.Done(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reading past the end: %v", err)
	}
	r, _ = NewReader(blob, "tag", 1)
	if err := r.Done(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing bytes: %v", err)
	}
	if Reseal([]byte{1}) != nil {
		t.Fatal("Reseal of a short blob")
	}
	bad := append([]byte{}, blob...)
	bad[len(bad)-8] ^= 0xff // inside the last float
	if _, err := NewReader(Reseal(bad), "tag", 1); err != nil {
		t.Fatalf("resealed blob refused: %v", err)
	}
}

// TestReaderVersions: NewReaderVersions takes the versions of its range,
// reports which one the blob has, and refuses those outside.
func TestReaderVersions(t *testing.T) {
	for v := uint32(1); v <= 4; v++ {
		w := NewWriter("tag", v)
		w.Int(int(v))
		r, got, err := NewReaderVersions(w.Finish(), "tag", 2, 3)
		if in := v >= 2 && v <= 3; !in {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("version %d: err = %v, want ErrCorrupt", v, err)
			}
			continue
		}
		if err != nil || got != v || r.Int() != int(v) || r.Done() != nil {
			t.Errorf("version %d: got version %d, err %v", v, got, err)
		}
	}
}

// TestUpperFloats: UpperFloats writes n and the upper triangle (with a
// stride, the lower never read), n(n+1)/2 values, and reads back the full
// matrix with both triangles equal to the written one bit for bit (−0 and
// NaN payloads included).
func TestUpperFloats(t *testing.T) {
	odd := []float64{math.Copysign(0, -1), math.Float64frombits(0x7ff8000000000abc), math.Inf(-1), 1e-310}
	for _, n := range []int{0, 1, 2, 5, 17} {
		stride := n + 3
		data := make([]float64, n*stride)
		full := make([]float64, n*n)
		for i := range n {
			for j := i; j < n; j++ {
				v := float64(i*100+j) + 0.25
				if (i+j)%3 == 0 {
					v = odd[(i+j)%len(odd)]
				}
				data[i*stride+j] = v
				full[i*n+j], full[j*n+i] = v, v
			}
			for j := range i {
				data[i*stride+j] = math.NaN() // the lower triangle is never read
			}
		}
		prefix := []byte("kept")
		w := NewWriterTo(slices.Clone(prefix), "tag", 2)
		w.UpperFloats(n, stride, data)
		w.Int(7) // what follows is read at its place
		blob := w.Finish()
		if string(blob[:len(prefix)]) != "kept" {
			t.Fatalf("n=%d: the prefix was overwritten", n)
		}
		empty := NewWriter("tag", 2)
		if got, want := len(blob)-len(prefix)-len(empty.Finish()), 8+8*n*(n+1)/2+8; got != want {
			t.Fatalf("n=%d: %d bytes, want %d", n, got, want)
		}
		r, err := NewReader(blob[len(prefix):], "tag", 2)
		if err != nil {
			t.Fatal(err)
		}
		gotN, got := r.UpperFloats()
		if gotN != n || len(got) != n*n || r.Int() != 7 || r.Done() != nil {
			t.Fatalf("n=%d: read dimension %d, %d values, err %v", n, gotN, len(got), r.Err())
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(full[i]) {
				t.Fatalf("n=%d: entry (%d, %d) is %v, want %v", n, i/n, i%n, got[i], full[i])
			}
		}
	}
}

// TestUpperFloatsRejects: a negative, huge or truncated dimension is an
// error, not a panic or a large allocation.
func TestUpperFloatsRejects(t *testing.T) {
	for _, n := range []int{-1, 3, 1 << 31, math.MaxInt, math.MinInt} {
		w := NewWriter("tag", 1)
		w.Int(n)
		w.Floats([]float64{1, 2, 3}) // 4 words: fewer than 3·4/2 + … values
		r, err := NewReader(w.Finish(), "tag", 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, v := r.UpperFloats(); !errors.Is(r.Err(), ErrCorrupt) || v != nil {
			t.Errorf("dimension %d: err %v, %d values", n, r.Err(), len(v))
		}
	}
}

// FloatRows writes what Floats writes of the rows' concatenation.
func TestFloatRows(t *testing.T) {
	rows := [][]float64{{1, negZero, math.Inf(1)}, {}, {math.NaN(), 2.5}}
	a := NewWriter("t", 1)
	a.FloatRows(rows...)
	b := NewWriter("t", 1)
	b.Floats([]float64{1, negZero, math.Inf(1), math.NaN(), 2.5})
	if !bytes.Equal(a.Finish(), b.Finish()) {
		t.Fatal("FloatRows wrote other bytes than Floats")
	}
}

// TestBools: flags round-trip as a length and a byte each (the layout the
// engine codecs wrote by hand before), none reads as nil, and a length
// past the blob or a byte other than 0 or 1 fails.
func TestBools(t *testing.T) {
	w := NewWriter("tag", 1)
	w.Bools([]bool{true, false, true})
	w.Bools(nil)
	blob := w.Finish()
	hand := NewWriter("tag", 1)
	hand.Int(3)
	hand.Bool(true)
	hand.Bool(false)
	hand.Bool(true)
	hand.Int(0)
	if !slices.Equal(blob, hand.Finish()) {
		t.Fatal("Bools writes other bytes than a length and a Bool each")
	}
	r, err := NewReader(blob, "tag", 1)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Bools(); !slices.Equal(v, []bool{true, false, true}) {
		t.Errorf("Bools = %v", v)
	}
	if v := r.Bools(); v != nil {
		t.Errorf("no flags read as %#v, want nil", v)
	}
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}

	for name, write := range map[string]func(*Writer){
		"length past the blob": func(w *Writer) { w.Int(5); w.Bool(true) },
		"byte 2":               func(w *Writer) { w.Int(1); w.Uint32(2) },
	} {
		w := NewWriter("tag", 1)
		write(w)
		r, err := NewReader(w.Finish(), "tag", 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.Bools(); r.Err() == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
