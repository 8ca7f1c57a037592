// Package binenc is the small exact binary encoding that the algorithm
// packages persist their state with: little-endian fixed-width integers,
// float64 bit patterns (so every value round-trips exactly, NaN payloads
// included), length-prefixed slices, a magic tag, a schema version and a
// CRC-32 trailer so that a corrupted or foreign blob is refused whole.
package binenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
)

// Writer appends values to a byte slice.
type Writer struct {
	buf   []byte
	start int // where the blob starts in buf
}

// NewWriter starts a blob with its magic tag and schema version.
func NewWriter(magic string, version uint32) *Writer { return NewWriterSize(magic, version, 1024) }

// NewWriterSize is NewWriter with room for about size bytes, so that a
// large state is written without growing the buffer.
func NewWriterSize(magic string, version uint32, size int) *Writer {
	return NewWriterTo(make([]byte, 0, size+len(magic)+16), magic, version)
}

// NewWriterTo is NewWriter appending to dst, so that a caller can reuse a
// buffer: Finish returns dst extended.
func NewWriterTo(dst []byte, magic string, version uint32) *Writer {
	w := &Writer{buf: dst, start: len(dst)}
	w.String(magic)
	w.Uint32(version)
	return w
}

func (w *Writer) Uint32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }
func (w *Writer) Uint64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }
func (w *Writer) Int(v int)       { w.Uint64(uint64(int64(v))) }
func (w *Writer) Float(v float64) { w.Uint64(math.Float64bits(v)) }
func (w *Writer) Bool(v bool)     { w.buf = append(w.buf, boolByte(v)) }
func (w *Writer) Bytes(v []byte)  { w.Int(len(v)); w.buf = append(w.buf, v...) }
func (w *Writer) String(v string) { w.Int(len(v)); w.buf = append(w.buf, v...) }
func (w *Writer) Floats(v []float64) {
	w.Int(len(v))
	off := len(w.buf)
	w.buf = slices.Grow(w.buf, 8*len(v))[:off+8*len(v)]
	out := w.buf[off:]
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
	}
}

// FloatRows writes the rows one after the other as Floats writes their
// concatenation (Reader.Floats reads them back as one slice), without
// copying them into one first.
func (w *Writer) FloatRows(rows ...[]float64) {
	k := 0
	for _, r := range rows {
		k += len(r)
	}
	w.Int(k)
	off := len(w.buf)
	w.buf = slices.Grow(w.buf, 8*k)[:off+8*k]
	out := w.buf[off:]
	for _, r := range rows {
		for _, x := range r {
			binary.LittleEndian.PutUint64(out, math.Float64bits(x))
			out = out[8:]
		}
	}
}

// UpperFloats writes the symmetric n×n matrix whose upper triangle is in
// data, row i at data[i*stride:] (the lower triangle is not read), as n and
// then the upper triangle row by row: n(n+1)/2 values, about half the bytes
// of the full matrix. Reader.UpperFloats reads it back.
func (w *Writer) UpperFloats(n, stride int, data []float64) {
	w.Int(n)
	k := n * (n + 1) / 2
	off := len(w.buf)
	w.buf = slices.Grow(w.buf, 8*k)[:off+8*k]
	out := w.buf[off:]
	for i := range n {
		for _, x := range data[i*stride+i : i*stride+n] {
			binary.LittleEndian.PutUint64(out, math.Float64bits(x))
			out = out[8:]
		}
	}
}

func (w *Writer) Ints(v []int) {
	w.Int(len(v))
	for _, x := range v {
		w.Int(x)
	}
}

// Bools writes len(v), then a byte per flag.
func (w *Writer) Bools(v []bool) {
	w.Int(len(v))
	for _, b := range v {
		w.Bool(b)
	}
}

// Finish appends the CRC-32 (IEEE) of everything written and returns the
// blob (after what NewWriterTo's dst held).
func (w *Writer) Finish() []byte {
	return binary.LittleEndian.AppendUint32(w.buf, crc32.ChecksumIEEE(w.buf[w.start:]))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("corrupt or foreign state")

// Reader reads values back in the order they were written. The first error
// sticks: later reads return zero values, and Err reports it.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader checks the trailer, the magic tag and the version, and returns a
// Reader positioned after them. maxLen bounds every slice length read.
func NewReader(blob []byte, magic string, version uint32) (*Reader, error) {
	r, _, err := NewReaderVersions(blob, magic, version, version)
	return r, err
}

// NewReaderVersions is NewReader for a decoder that reads the versions
// oldest to newest: it also returns the blob's version.
func NewReaderVersions(blob []byte, magic string, oldest, newest uint32) (*Reader, uint32, error) {
	if len(blob) < 4 {
		return nil, 0, fmt.Errorf("binenc: %w: %d bytes", ErrCorrupt, len(blob))
	}
	body, sum := blob[:len(blob)-4], binary.LittleEndian.Uint32(blob[len(blob)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, 0, fmt.Errorf("binenc: %w: checksum mismatch", ErrCorrupt)
	}
	r := &Reader{buf: body}
	if m := r.String(); m != magic {
		return nil, 0, fmt.Errorf("binenc: %w: tag %q, want %q", ErrCorrupt, m, magic)
	}
	v := r.Uint32()
	if r.err != nil {
		return nil, 0, r.err
	}
	if v < oldest || v > newest {
		want := fmt.Sprint(newest)
		if oldest < newest {
			want = fmt.Sprintf("%d to %d", oldest, newest)
		}
		return nil, 0, fmt.Errorf("binenc: %w: %s schema version %d, want %s", ErrCorrupt, magic, v, want)
	}
	return r, v, nil
}

func (r *Reader) need(k int) []byte {
	if r.err != nil {
		return nil
	}
	if k < 0 || len(r.buf)-r.off < k {
		r.err = fmt.Errorf("binenc: %w: truncated at byte %d", ErrCorrupt, r.off)
		return nil
	}
	b := r.buf[r.off : r.off+k]
	r.off += k
	return b
}

func (r *Reader) Uint32() uint32 {
	if b := r.need(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *Reader) Uint64() uint64 {
	if b := r.need(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *Reader) Int() int       { return int(int64(r.Uint64())) }
func (r *Reader) Float() float64 { return math.Float64frombits(r.Uint64()) }
func (r *Reader) Bool() bool {
	b := r.need(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		r.fail("bool byte %d", b[0])
	}
	return b[0] == 1
}

// length reads a slice length whose elements take size bytes each.
func (r *Reader) length(size int) int {
	n := r.Int()
	if r.err == nil && (n < 0 || n > (len(r.buf)-r.off)/size) {
		r.fail("length %d exceeds the blob", n)
		return 0
	}
	return n
}

func (r *Reader) Bytes() []byte {
	n := r.length(1)
	return append([]byte(nil), r.need(n)...)
}

func (r *Reader) String() string { return string(r.need(r.length(1))) }

func (r *Reader) Floats() []float64 {
	n := r.length(8)
	if r.err != nil {
		return nil
	}
	in := r.need(8 * n)
	if r.err != nil {
		return nil
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(in[8*i:]))
	}
	return v
}

// maxUpperDim bounds the dimension UpperFloats reads, so that n(n+1)/2
// cannot overflow before it is checked against the blob.
const maxUpperDim = 1 << 30

// UpperFloats reads a matrix written by Writer.UpperFloats and returns its
// dimension n and its full n×n row-major data, both triangles set (the
// lower mirrored from the upper, bit for bit).
func (r *Reader) UpperFloats() (int, []float64) {
	n := r.Int()
	if r.err != nil {
		return 0, nil
	}
	if n < 0 || n > maxUpperDim || n*(n+1)/2 > (len(r.buf)-r.off)/8 {
		r.fail("symmetric matrix of dimension %d exceeds the blob", n)
		return 0, nil
	}
	in := r.need(8 * (n * (n + 1) / 2))
	if r.err != nil {
		return 0, nil
	}
	v := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			x := math.Float64frombits(binary.LittleEndian.Uint64(in))
			in = in[8:]
			v[i*n+j], v[j*n+i] = x, x
		}
	}
	return n, v
}

func (r *Reader) Ints() []int {
	n := r.length(8)
	if r.err != nil {
		return nil
	}
	v := make([]int, n)
	for i := range v {
		v[i] = r.Int()
	}
	return v
}

// Bools reads flags written by Writer.Bools; none is nil.
func (r *Reader) Bools() []bool {
	n := r.length(1)
	if r.err != nil || n == 0 {
		return nil
	}
	v := make([]bool, n)
	for i := range v {
		v[i] = r.Bool()
	}
	return v
}

func (r *Reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("binenc: %w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

// Fail records a semantic error found by the caller (a length that does not
// match the dimension, say).
func (r *Reader) Fail(format string, args ...any) { r.fail(format, args...) }

// Remaining returns the number of bytes not read yet.
func (r *Reader) Remaining() int { return len(r.buf) - r.off }

// Err reports the first error met so far.
func (r *Reader) Err() error { return r.err }

// Done reports the first error, or one if bytes are left over.
func (r *Reader) Done() error {
	if r.err == nil && r.off != len(r.buf) {
		r.fail("%d trailing bytes", len(r.buf)-r.off)
	}
	return r.err
}

// Reseal replaces the CRC-32 trailer of blob with the checksum of its body,
// so that fuzz tests reach the decoder past the checksum. It returns nil
// for a blob shorter than the trailer.
func Reseal(blob []byte) []byte {
	if len(blob) < 4 {
		return nil
	}
	body := append([]byte(nil), blob[:len(blob)-4]...)
	return binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
}
