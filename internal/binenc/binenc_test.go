package binenc

import (
	"errors"
	"math"
	"slices"
	"testing"
)

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
	w.Floats([]float64{1.5, -0.0, math.SmallestNonzeroFloat64})
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
	if len(fs) != 3 || fs[0] != 1.5 || math.Float64bits(fs[1]) != math.Float64bits(-0.0) || fs[2] != math.SmallestNonzeroFloat64 {
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

// TestSymFloats: the full matrix SymFloats writes from an upper triangle
// (with a stride) reads back as Floats of the mirrored matrix, and
// NewWriterTo writes after what dst holds the bytes NewWriter writes.
func TestSymFloats(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 17} {
		stride := n + 3
		data := make([]float64, n*stride)
		full := make([]float64, n*n)
		for i := range n {
			for j := i; j < n; j++ {
				v := float64(i*100+j) + 0.25
				data[i*stride+j] = v
				full[i*n+j], full[j*n+i] = v, v
			}
			for j := range i {
				data[i*stride+j] = math.NaN() // the lower triangle is never read
			}
		}
		prefix := []byte("kept")
		w := NewWriterTo(slices.Clone(prefix), "tag", 2)
		w.SymFloats(n, stride, data)
		blob := w.Finish()
		want := NewWriter("tag", 2)
		want.Floats(full)
		if !slices.Equal(blob[len(prefix):], want.Finish()) || string(blob[:len(prefix)]) != "kept" {
			t.Fatalf("n=%d: SymFloats differs from Floats of the full matrix", n)
		}
		r, err := NewReader(blob[len(prefix):], "tag", 2)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Floats(); !slices.Equal(got, full) || r.Done() != nil {
			t.Fatalf("n=%d: read back %v, want %v", n, got, full)
		}
	}
}
