package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"slices"
	"strings"
)

// A reader of bbolt's pages that trusts nothing in the file.
//
// bbolt maps its file into memory and follows the page ids, offsets and
// lengths it finds there without checking them against the file: on a
// damaged file a read beyond its end faults, which Go cannot recover from
// (fatal error: fault), and a page of garbage sends bbolt's own check into
// panics on goroutines of its own. The reader here reads the pages with
// ReadAt and checks every page header, element and bucket header against the
// page's bounds and the file's before it uses them. Open walks a file so
// before bbolt maps it (a file that passes is one bbolt can read without
// a fault), and OpenDamaged reads what it can of a damaged one.
//
// The format is bbolt's (version 2, unchanged since boltdb): a page starts
// with id (8 bytes), flags (2), count (2), overflow (4); a meta page holds
// magic, version, page size, flags (4 bytes each), the root bucket (root
// page 8, sequence 8), freelist page, high-water mark, txid, and the FNV-64a
// checksum of what precedes it (8 bytes each); a branch page has count
// elements of pos (4), ksize (4), pgid (8), a leaf page count elements of
// flags (4), pos (4), ksize (4), vsize (4), pos counted from the element;
// a bucket's value is its root page (8, 0 = inline) and sequence (8),
// followed by a leaf page when inline. Integers are in the machine's order.

const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16
	elementSize      = 16 // branch and leaf elements alike
	metaSize         = 64 // with its checksum
	bucketHeaderSize = 16
	noFreelist       = ^uint64(0)

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagMeta     = 0x04
	flagFreelist = 0x10
	flagBucket   = 0x01 // of a leaf element

	minPageSize = 512
	maxPageSize = 1 << 24
)

var order = binary.NativeEndian

// errCutShort is wrapped by the error of a file shorter than its pages in use.
var errCutShort = errors.New("the file was cut short")

// boltMeta is a meta page.
type boltMeta struct {
	magic, version, pageSize uint32
	root, freelist, hwm      uint64 // hwm: pgid, the first page id not in use
	txid                     uint64
	err                      error // why it is not valid; nil if it is
}

func parseMeta(b []byte) boltMeta {
	if len(b) < pageHeaderSize+metaSize {
		return boltMeta{err: fmt.Errorf("a meta page of %d bytes", len(b))}
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	mt := boltMeta{
		magic: order.Uint32(m), version: order.Uint32(m[4:]), pageSize: order.Uint32(m[8:]),
		root: order.Uint64(m[16:]), freelist: order.Uint64(m[32:]), hwm: order.Uint64(m[40:]), txid: order.Uint64(m[48:]),
	}
	h := fnv.New64a()
	h.Write(m[:56])
	switch {
	case mt.magic != boltMagic:
		mt.err = errors.New("not a bbolt meta page (magic)")
	case mt.version != boltVersion:
		mt.err = fmt.Errorf("bbolt version %d, want %d", mt.version, boltVersion)
	case order.Uint64(m[56:]) != h.Sum64():
		mt.err = errors.New("checksum mismatch")
	}
	return mt
}

// pageFile is a bbolt file read with ReadAt.
type pageFile struct {
	r        io.ReaderAt
	size     int64
	pageSize int
	meta     boltMeta // the meta page bbolt uses: of the higher txid, if valid
	metaID   int      // 0 or 1
	notes    []string // what is odd but not damage (a meta page not valid, the other one used)
	headers  []error  // meta pages whose header is damaged
}

// readPageFile reads the meta pages of the file r of size bytes as bbolt
// does (bbolt's getPageSize, mmap and meta) and checks the one bbolt would
// use against the file: an error means that bbolt would fail or fault on it.
func readPageFile(r io.ReaderAt, size int64) (*pageFile, error) {
	pf := &pageFile{r: r, size: size}
	// The page size: meta 0's if valid, else the first valid meta page at
	// 1 KiB·2^i, else the machine's (bbolt's getPageSize).
	buf := make([]byte, 0x1000)
	if n, _ := r.ReadAt(buf, 0); n == len(buf) {
		if m := parseMeta(buf); m.err == nil {
			pf.pageSize = int(m.pageSize)
		}
	}
	for i := 0; pf.pageSize == 0 && i <= 14; i++ {
		pos := int64(1024) << i
		if pos >= size-1024 {
			break
		}
		n, _ := r.ReadAt(buf, pos)
		if m := parseMeta(buf[:n]); m.err == nil {
			pf.pageSize = int(m.pageSize)
		}
	}
	if pf.pageSize == 0 {
		pf.pageSize = os.Getpagesize()
	}
	if pf.pageSize < minPageSize || pf.pageSize > maxPageSize {
		return pf, fmt.Errorf("page size %d", pf.pageSize)
	}
	if size < 2*int64(pf.pageSize) {
		return pf, fmt.Errorf("%d bytes, less than the two meta pages of %d", size, pf.pageSize)
	}
	var metas [2]boltMeta
	for i := range metas {
		b := make([]byte, pageHeaderSize+metaSize)
		if _, err := r.ReadAt(b, int64(i)*int64(pf.pageSize)); err != nil {
			metas[i] = boltMeta{err: err}
			continue
		}
		metas[i] = parseMeta(b)
		// bbolt's check asserts the headers of both (its checksum covers
		// the meta only).
		if id, flags := order.Uint64(b), order.Uint16(b[8:]); id != uint64(i) || flags != flagMeta {
			pf.headers = append(pf.headers, fmt.Errorf("page %d: the header of a meta page says page %d of type %s", i, id, pageType(flags)))
		}
	}
	a, b := 0, 1
	if metas[1].txid > metas[0].txid {
		a, b = 1, 0
	}
	switch {
	case metas[a].err == nil:
		pf.meta, pf.metaID = metas[a], a
	case metas[b].err == nil:
		pf.meta, pf.metaID = metas[b], b
		pf.notes = append(pf.notes, fmt.Sprintf("meta page %d: %v; meta page %d (an earlier commit) is used", a, metas[a].err, b))
	default:
		pf.meta, pf.metaID = metas[a], a
		return pf, fmt.Errorf("both meta pages are damaged: page 0: %v; page 1: %v", metas[0].err, metas[1].err)
	}
	m := pf.meta
	if b := metas[b]; b.err != nil && pf.metaID == a {
		pf.notes = append(pf.notes, fmt.Sprintf("meta page %d (of the commit before the last): %v", 1-pf.metaID, b.err))
	}
	if int(m.pageSize) != pf.pageSize {
		return pf, fmt.Errorf("meta page %d: page size %d, the file's is %d", pf.metaID, m.pageSize, pf.pageSize)
	}
	switch {
	case m.hwm < 3:
		return pf, fmt.Errorf("meta page %d: %d pages in use", pf.metaID, m.hwm)
	case m.hwm > uint64(size)/uint64(pf.pageSize):
		return pf, fmt.Errorf("the file is %d bytes, %d pages, but its meta page says %d pages are in use (%d bytes): %w",
			size, uint64(size)/uint64(pf.pageSize), m.hwm, m.hwm*uint64(pf.pageSize), errCutShort)
	case m.root < 2 || m.root >= m.hwm:
		return pf, fmt.Errorf("meta page %d: root page %d of %d", pf.metaID, m.root, m.hwm)
	case m.freelist != noFreelist && (m.freelist < 2 || m.freelist >= m.hwm):
		return pf, fmt.Errorf("meta page %d: freelist page %d of %d", pf.metaID, m.freelist, m.hwm)
	}
	return pf, nil
}

// readPage reads page id with its overflow pages, checking its header: its
// id, that it is of type want (a flag; flagBranch|flagLeaf: either), and
// that it ends before the high-water mark.
func (pf *pageFile) readPage(id uint64, want uint16) ([]byte, error) {
	hwm := pf.meta.hwm
	if id < 2 || id >= hwm {
		return nil, fmt.Errorf("page %d: out of the %d pages in use", id, hwm)
	}
	ps := int64(pf.pageSize)
	b := make([]byte, ps)
	if _, err := pf.r.ReadAt(b, int64(id)*ps); err != nil {
		return nil, fmt.Errorf("page %d: %w", id, err)
	}
	got, flags, overflow := order.Uint64(b), order.Uint16(b[8:]), uint64(order.Uint32(b[12:]))
	switch {
	case got != id:
		return nil, fmt.Errorf("page %d: says it is page %d", id, got)
	case flags != want && (want != flagBranch|flagLeaf || flags != flagBranch && flags != flagLeaf):
		return nil, fmt.Errorf("page %d: a page of type %s, want %s", id, pageType(flags), pageType(want))
	case overflow >= hwm-id:
		return nil, fmt.Errorf("page %d: %d overflow pages, past the %d pages in use", id, overflow, hwm)
	}
	if overflow > 0 {
		b = append(b, make([]byte, overflow*uint64(ps))...)
		if _, err := pf.r.ReadAt(b[ps:], (int64(id)+1)*ps); err != nil {
			return nil, fmt.Errorf("page %d: %w", id, err)
		}
	}
	return b, nil
}

func pageType(flags uint16) string {
	switch flags {
	case flagBranch:
		return "branch"
	case flagLeaf:
		return "leaf"
	case flagMeta:
		return "meta"
	case flagFreelist:
		return "freelist"
	}
	return fmt.Sprintf("unknown (flags %#x)", flags)
}

// walker walks the tree of buckets of a pageFile from its meta page's root,
// checking every page as bbolt's Tx.Check does and more (every offset and
// length against the page), without trusting any: a damaged page is
// reported and what lies under it skipped. Visit, if not nil, is called for
// each key of each bucket (val.n < 0 for a nested bucket), with the bucket's
// path, the position of the value in the file and the pages read on the way
// to it, the root's first (valid during the call only).
type walker struct {
	pf      *pageFile
	reached []bool // by page id: a page of the tree, the freelist or a meta page
	free    []bool // by page id: in the freelist
	probs   []error
	visit   visitFunc
	stack   []uint64 // the pages from the root to the one read, overflow pages included
	reads   uint64   // tree pages read
	unread  int      // tree pages that could not be read
}

type visitFunc func(path []string, key []byte, val valueAt, pages []uint64)

// valueAt is where a value lies in the file.
type valueAt struct {
	off int64
	n   int
}

// maxProblems is how many problems a walk reports; it goes on counting.
const maxProblems = 1000

func (w *walker) report(path []string, format string, args ...any) {
	if len(w.probs) == maxProblems {
		w.probs = append(w.probs, errors.New("more problems not listed"))
	}
	if len(w.probs) > maxProblems {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if len(path) > 0 {
		msg = "bucket " + strings.Join(path, "/") + ": " + msg
	}
	w.probs = append(w.probs, errors.New(msg))
}

// walkFile walks the whole file: the freelist, the tree of buckets, then
// the pages in use that are neither reached nor free. It returns the
// problems found.
func walkFile(pf *pageFile, visit visitFunc) []error {
	hwm := pf.meta.hwm
	w := &walker{pf: pf, reached: make([]bool, hwm), free: make([]bool, hwm), visit: visit}
	w.reached[0], w.reached[1] = true, true
	w.probs = append(w.probs, pf.headers...)
	if id := pf.meta.freelist; id != noFreelist {
		w.freelist(id)
	}
	w.page(nil, pf.meta.root, nil, 0, nil, nil)
	var unreached []uint64
	for id := range hwm {
		if !w.reached[id] && !w.free[id] {
			unreached = append(unreached, id)
		}
	}
	switch {
	case len(unreached) == 0:
	case w.unread > 0: // what lay under the pages not read
		w.report(nil, "%d pages in use neither reached nor free (from page %d), most under the damaged pages", len(unreached), unreached[0])
	default:
		for _, id := range unreached[:min(len(unreached), 10)] {
			w.report(nil, "page %d: neither reachable nor free", id)
		}
		if len(unreached) > 10 {
			w.report(nil, "%d pages in all neither reachable nor free", len(unreached))
		}
	}
	return w.probs
}

func (w *walker) freelist(id uint64) {
	b, err := w.pf.readPage(id, flagFreelist)
	if err != nil {
		w.report(nil, "freelist: %v", err)
		return
	}
	w.markReached(nil, id, b)
	n, ids := uint64(order.Uint16(b[10:])), b[pageHeaderSize:]
	if n == 0xFFFF { // the count is the first id
		if len(ids) < 8 {
			w.report(nil, "freelist: page %d: no count", id)
			return
		}
		n, ids = order.Uint64(ids), ids[8:]
	}
	if n > uint64(len(ids)/8) {
		w.report(nil, "freelist: page %d: %d ids in %d bytes", id, n, len(ids))
		return
	}
	for i := range n {
		f := order.Uint64(ids[8*i:])
		switch {
		case f < 2 || f >= w.pf.meta.hwm:
			w.report(nil, "freelist: page %d of %d", f, w.pf.meta.hwm)
		case w.free[f]:
			w.report(nil, "freelist: page %d is listed twice", f)
		default:
			w.free[f] = true
		}
	}
	for i := uint64(0); i*uint64(w.pf.pageSize) < uint64(len(b)); i++ {
		if w.free[id+i] {
			w.report(nil, "freelist: page %d, the freelist's own, is free", id+i)
		}
	}
}

// markReached marks the pages of page id (b, with its overflow) reached and
// reports those reached before or free. The walk goes on into such a page
// (a damaged branch may point into another's subtree before the sound one
// does: the sound one's walk must not lose it); visits are deduplicated by
// the value's offset in the file.
func (w *walker) markReached(path []string, id uint64, b []byte) {
	for i := uint64(0); i < uint64(len(b)/w.pf.pageSize); i++ {
		switch {
		case w.reached[id+i]:
			w.report(path, "page %d: reached twice", id+i)
		case w.free[id+i]:
			w.report(path, "page %d: in the tree and free", id+i)
		}
		w.reached[id+i] = true
	}
}

// page walks the page id of the bucket at path, or (inline not nil) the
// inline page at offset base of the file, whose keys must lie in [lo, hi)
// (nil: no bound). It returns false when it could not read the page.
func (w *walker) page(path []string, id uint64, inline []byte, base int64, lo, hi []byte) bool {
	b := inline
	if inline == nil {
		if slices.Contains(w.stack, id) {
			w.report(path, "page %d: its own ancestor", id)
			return false
		}
		if w.reads++; w.reads > 2*w.pf.meta.hwm+1000 {
			if w.reads == 2*w.pf.meta.hwm+1001 {
				w.report(path, "page %d: more page reads than twice the pages in use", id)
			}
			return false
		}
		var err error
		if b, err = w.pf.readPage(id, flagBranch|flagLeaf); err != nil {
			w.report(path, "%v", err)
			return w.fail()
		}
		w.markReached(path, id, b)
		base = int64(id) * int64(w.pf.pageSize)
		depth := len(w.stack)
		for i := range uint64(len(b) / w.pf.pageSize) {
			w.stack = append(w.stack, id+i)
		}
		defer func() { w.stack = w.stack[:depth] }()
	}
	flags, count := order.Uint16(b[8:]), int(order.Uint16(b[10:]))
	where := fmt.Sprintf("page %d", id)
	if inline != nil {
		where = fmt.Sprintf("the inline page at byte %d", base)
		if flags != flagLeaf {
			w.report(path, "%s: of type %s, want leaf", where, pageType(flags))
			return w.fail()
		}
	}
	if pageHeaderSize+count*elementSize > len(b) {
		w.report(path, "%s: %d elements in %d bytes", where, count, len(b))
		return w.fail()
	}
	if flags == flagBranch && count == 0 {
		w.report(path, "%s: a branch page without elements", where)
		return w.fail()
	}
	prev := lo
	for i := range count {
		e := pageHeaderSize + i*elementSize
		pos, ksize := uint64(order.Uint32(b[e+4:])), uint64(order.Uint32(b[e+8:]))
		if flags == flagBranch {
			pos, ksize = uint64(order.Uint32(b[e:])), uint64(order.Uint32(b[e+4:]))
		}
		var vsize uint64
		if flags == flagLeaf {
			vsize = uint64(order.Uint32(b[e+12:]))
		}
		if uint64(e)+pos+ksize+vsize > uint64(len(b)) {
			w.report(path, "%s: element %d runs past the page's %d bytes", where, i, len(b))
			return w.fail()
		}
		key := b[uint64(e)+pos : uint64(e)+pos+ksize]
		switch {
		case i > 0 && bytes.Compare(prev, key) >= 0:
			w.report(path, "%s: key %d (%x) not after the one before (%x)", where, i, key, prev)
			return w.fail()
		case i == 0 && prev != nil && bytes.Compare(prev, key) > 0:
			w.report(path, "%s: first key %x before its branch key %x", where, key, prev)
			return w.fail()
		case hi != nil && bytes.Compare(key, hi) >= 0:
			w.report(path, "%s: key %d (%x) not before the next branch key (%x)", where, i, key, hi)
			return w.fail()
		}
		prev = key
		if flags == flagBranch {
			next := hi
			if i+1 < count {
				n := pageHeaderSize + (i+1)*elementSize
				np, nk := uint64(order.Uint32(b[n:])), uint64(order.Uint32(b[n+4:]))
				if uint64(n)+np+nk <= uint64(len(b)) {
					next = b[uint64(n)+np : uint64(n)+np+nk]
				}
			}
			w.page(path, order.Uint64(b[e+8:]), nil, 0, key, next)
			continue
		}
		val := b[uint64(e)+pos+ksize : uint64(e)+pos+ksize+vsize]
		valOff := base + int64(uint64(e)+pos+ksize)
		switch ef := order.Uint32(b[e:]); ef {
		case 0:
			if w.visit != nil {
				w.visit(path, key, valueAt{off: valOff, n: len(val)}, w.stack)
			}
		case flagBucket:
			w.bucket(path, key, val, valOff)
		default:
			w.report(path, "%s: element %d: flags %#x", where, i, ef)
		}
	}
	return true
}

// fail counts a tree page whose content is dropped (what lies under it is
// not reached) and returns false.
func (w *walker) fail() bool {
	w.unread++
	return false
}

// bucket walks the bucket key of the bucket at path, whose header is val,
// at offset off of the file.
func (w *walker) bucket(path []string, key, val []byte, off int64) {
	sub := append(path[:len(path):len(path)], string(key))
	if len(val) < bucketHeaderSize {
		w.report(path, "bucket %q: a header of %d bytes", key, len(val))
		return
	}
	if w.visit != nil {
		w.visit(path, key, valueAt{off: off, n: -1}, w.stack)
	}
	root := order.Uint64(val)
	if root != 0 {
		w.page(sub, root, nil, 0, nil, nil)
		return
	}
	if len(val) < bucketHeaderSize+pageHeaderSize {
		w.report(path, "bucket %q: an inline page of %d bytes", key, len(val)-bucketHeaderSize)
		return
	}
	w.page(sub, 0, val[bucketHeaderSize:], off+bucketHeaderSize, nil, nil)
}
