package bolt

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	"go.etcd.io/bbolt"
)

// Damaged reads what can be read of a damaged file, without bbolt: the
// pages are read with ReadAt and each is checked before it is used (see
// pages.go), so that a damaged page loses what lies under it and nothing
// else. It implements the reads of session.Store (writes fail), so that
// session.Check reads the sessions it holds; Salvage writes those that read
// soundly to a new file.
type Damaged struct {
	f  *os.File
	pf *pageFile

	problems []error // the damage the walk found, and the records that do not split
	notes    []string

	recs      []damagedRec       // by id
	metas     map[string]valueAt // id -> version ‖ meta of a meta-only write (layout 5)
	hist      map[string][]histAt
	keys      map[string]valueAt  // idempotency key -> len(id) ‖ id ‖ data
	keyOf     map[string]string   // id -> idempotency key
	keyOwners map[string][]string // id -> the keys that name it in keys
	schema    string
	epoch     uint64            // of the told-value log (layout 6)
	held      map[string][]byte // id -> version ‖ meta: the told values of the log (salvageLog)
	seenIDs   map[string]bool   // ids named anywhere: records, history, keys

	pages    map[string][]uint64 // id -> the pages its record, history and keyof entry were read from, with those above them
	keyPages map[string][]uint64 // idempotency key -> the same
}

type damagedRec struct {
	id string
	at valueAt
}

type histAt struct {
	g  uint64
	at valueAt
}

var _ session.Store = (*Damaged)(nil)

// SalvageFrom is the earliest layout that Damaged reads (up to
// SchemaVersion): layout 6 adds to layout 5 the told-value log only.
const SalvageFrom = 5

// OpenDamaged reads the file at path, whatever its state, holding it as a
// reader does (another process writing it: ErrInUse). It fails only when
// nothing of the file can be read (no valid meta page, say).
func OpenDamaged(path string) (*Damaged, error) {
	f, size, err := openShared(path)
	if err != nil {
		return nil, err
	}
	d := &Damaged{f: f, metas: map[string]valueAt{}, hist: map[string][]histAt{}, keys: map[string]valueAt{}, keyOf: map[string]string{}, keyOwners: map[string][]string{}, seenIDs: map[string]bool{}, pages: map[string][]uint64{}, keyPages: map[string][]uint64{}}
	if err := d.readPageFile(size); err != nil {
		f.Close()
		return nil, fmt.Errorf("store: open %s: nothing can be read: %w", path, err)
	}
	records := map[string]valueAt{}
	d.problems = append(d.problems, walkFile(d.pf, func(path []string, key []byte, at valueAt, pages []uint64) {
		if id := d.visit(records, path, key, at, pages); id != "" {
			d.addPages(id, pages)
		}
	})...)
	d.index(records)
	if b, _, probs, err := readLog(path, d.epoch); err != nil {
		d.problems = append(d.problems, err)
	} else {
		d.problems = append(d.problems, probs...)
		d.held = salvageLog(b, d.epoch)
	}
	return d, nil
}

// openShared opens the file at path and takes its shared lock, as a
// reader; it returns the file and its size.
func openShared(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("store: open %s: %w", path, err)
	}
	if err := lockFile(f, false, time.Second); err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("store: open %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("store: open %s: %w", path, err)
	}
	return f, fi.Size(), nil
}

// readPageFile reads the meta pages of d's file of size bytes. A file cut
// short with a sound meta page is read as far as it goes (a problem), so
// long as its root page is there.
func (d *Damaged) readPageFile(size int64) error {
	pf, err := readPageFile(d.f, size)
	d.pf = pf
	d.notes = pf.notes
	if !errors.Is(err, errCutShort) {
		return err
	}
	d.problems = append(d.problems, err)
	pf.meta.hwm = uint64(size) / uint64(pf.pageSize)
	if pf.meta.freelist >= pf.meta.hwm {
		pf.meta.freelist = noFreelist
	}
	if pf.meta.root >= pf.meta.hwm {
		return fmt.Errorf("%w, and its root page with it", err)
	}
	return nil
}

// visit takes in one value (or bucket: at.n < 0) of the walk, at path,
// key: a record goes to records; the rest to d. It returns the id of the
// session the value belongs to, "" for none.
func (d *Damaged) visit(records map[string]valueAt, path []string, key []byte, at valueAt, pages []uint64) (id string) {
	if len(path) == 2 && path[0] == string(bucketSessions) && bytes.Equal(key, keyRecord) && at.n >= 0 {
		records[path[1]] = at
		return path[1]
	}
	if len(path) != 1 {
		return ""
	}
	switch bucket := path[0]; {
	case bucket == string(bucketMeta) && bytes.Equal(key, keySchema) && at.n >= 0 && at.n < 16:
		b, _ := d.read(at)
		d.schema = string(b)
	case bucket == string(bucketMeta) && bytes.Equal(key, keyEpoch) && at.n == 8:
		b, _ := d.read(at)
		d.epoch = binary.BigEndian.Uint64(b)
	case bucket == string(bucketSessions):
		d.seenIDs[string(key)] = true
		if at.n >= 0 {
			d.problems = append(d.problems, fmt.Errorf("sessions: %s is a value, not a session's bucket", key))
		}
	case at.n < 0:
	case bucket == string(bucketHist):
		if len(key) < 2 || len(key) != 2+int(binary.BigEndian.Uint16(key))+8 {
			d.problems = append(d.problems, fmt.Errorf("history: key %x of %d bytes", key, len(key)))
			return ""
		}
		id = string(key[2 : len(key)-8])
		d.seenIDs[id] = true
		d.hist[id] = append(d.hist[id], histAt{g: binary.BigEndian.Uint64(key[len(key)-8:]), at: at})
	case bucket == string(bucketMetas):
		id = string(key)
		d.seenIDs[id] = true
		d.metas[id] = at
	case bucket == string(bucketKeys):
		d.keys[string(key)] = at
		d.keyPages[string(key)] = slices.Clone(pages)
	case bucket == string(bucketKeyOf):
		id = string(key)
		d.seenIDs[id] = true
		if b, err := d.read(at); err == nil {
			d.keyOf[string(key)] = string(b)
		}
	}
	return id
}

// index sorts what the walk found: the records by id, the keys by the
// session they name, each history by generation.
func (d *Damaged) index(records map[string]valueAt) {
	for id, at := range records {
		d.recs = append(d.recs, damagedRec{id: id, at: at})
	}
	slices.SortFunc(d.recs, func(a, b damagedRec) int { return cmp.Compare(a.id, b.id) })
	for key := range d.keys {
		if owner, _, err := d.Key(context.Background(), key); err == nil {
			d.keyOwners[owner] = append(d.keyOwners[owner], key)
		}
	}
	for id, h := range d.hist {
		// By generation; an entry reached twice (a damaged branch pointing
		// to its page) once.
		slices.SortStableFunc(h, func(a, b histAt) int { return cmp.Compare(a.g, b.g) })
		d.hist[id] = slices.CompactFunc(h, func(a, b histAt) bool { return a.g == b.g && a.at == b.at })
	}
}

// addPages adds pages to those of session id.
func (d *Damaged) addPages(id string, pages []uint64) {
	have := d.pages[id]
	for _, p := range pages {
		if !slices.Contains(have, p) {
			have = append(have, p)
		}
	}
	d.pages[id] = have
}

// Pages returns the pages of the file that session id was read from: those
// of its record, its history entries and its idempotency key, and those
// above them in the tree, in no order. A damage elsewhere leaves the
// session as it was (unless it strikes the meta page in use).
func (d *Damaged) Pages(id string) []uint64 {
	out := slices.Clone(d.pages[id])
	if key, ok := d.keyOf[id]; ok {
		for _, p := range d.keyPages[key] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// PageSize returns the size of the file's pages.
func (d *Damaged) PageSize() int { return d.pf.pageSize }

// MetaPage returns the meta page in use (0 or 1).
func (d *Damaged) MetaPage() int { return d.pf.metaID }

// Close closes the file.
func (d *Damaged) Close() error { return d.f.Close() }

// Problems returns the damage found in the pages, one error each.
func (d *Damaged) Problems() []error { return d.problems }

// Notes returns what is odd in the file but not damage (a meta page not
// valid, the other used).
func (d *Damaged) Notes() []string { return d.notes }

// Layout returns the file's layout version as its meta bucket says, "" if
// it could not be read.
func (d *Damaged) Layout() string { return d.schema }

// Lost returns, in order, the ids that the file names (in its sessions,
// history or keys) but of which no record could be read (List leaves
// them out).
func (d *Damaged) Lost() []string {
	var out []string
	for id := range d.seenIDs {
		if _, ok := d.find(id); !ok {
			out = append(out, id)
		}
	}
	for _, r := range d.recs {
		if _, err := d.Get(context.Background(), r.id); err != nil {
			out = append(out, r.id)
		}
	}
	slices.Sort(out)
	return out
}

// read returns the bytes at at, read from the file (they were checked to
// lie in a page that was read).
func (d *Damaged) read(at valueAt) ([]byte, error) {
	b := make([]byte, at.n)
	_, err := d.f.ReadAt(b, at.off)
	return b, err
}

func (d *Damaged) find(id string) (damagedRec, bool) {
	i, ok := slices.BinarySearchFunc(d.recs, id, func(r damagedRec, id string) int { return cmp.Compare(r.id, id) })
	if !ok {
		return damagedRec{}, false
	}
	return d.recs[i], true
}

// Get implements session.Store. A record that does not split is an error
// that does not wrap ErrNoRecord.
func (d *Damaged) Get(_ context.Context, id string) (session.Record, error) {
	r, ok := d.find(id)
	if !ok {
		return session.Record{}, fmt.Errorf("store: get %s: %w", id, session.ErrNoRecord)
	}
	v, err := d.read(r.at)
	if err != nil {
		return session.Record{}, err
	}
	version, meta, state, err := splitRecord([]byte(id), v)
	if err != nil {
		return session.Record{}, err
	}
	if at, ok := d.metas[id]; ok { // a meta-only write overrides the record's (as current does)
		m, err := d.read(at)
		if err != nil {
			return session.Record{}, err
		}
		if len(m) < 8 {
			return session.Record{}, fmt.Errorf("store: meta of %s: %d bytes", id, len(m))
		}
		version, meta = binary.BigEndian.Uint64(m), m[8:]
	}
	version, meta = overHeld(d.held[id], version, meta) // and a told value of the log (as Store's reads)
	return session.Record{ID: id, Version: version, Meta: meta, State: state}, nil
}

// Version implements session.Store.
func (d *Damaged) Version(ctx context.Context, id string) (uint64, error) {
	rec, err := d.Get(ctx, id)
	return rec.Version, err
}

// List implements session.Store: the records that split (those that do
// not are left out, and Lost names them).
func (d *Damaged) List(ctx context.Context, after string, limit int) ([]session.Record, error) {
	i, _ := slices.BinarySearchFunc(d.recs, after, func(r damagedRec, id string) int { return cmp.Compare(r.id, id) })
	var out []session.Record
	for ; i < len(d.recs) && (limit <= 0 || len(out) < limit); i++ {
		if d.recs[i].id == after {
			continue
		}
		rec, err := d.Get(ctx, d.recs[i].id)
		if err != nil {
			continue
		}
		rec.State = nil
		out = append(out, rec)
	}
	return out, nil
}

// History implements session.Store.
func (d *Damaged) History(_ context.Context, id string, from uint64, limit int) ([]session.HistoryEntry, error) {
	h := d.hist[id]
	i, _ := slices.BinarySearchFunc(h, from, func(e histAt, g uint64) int { return cmp.Compare(e.g, g) })
	var out []session.HistoryEntry
	for ; i < len(h) && (limit <= 0 || len(out) < limit); i++ {
		b, err := d.read(h[i].at)
		if err != nil {
			return out, err
		}
		out = append(out, session.HistoryEntry{Generation: h[i].g, Data: b})
	}
	return out, nil
}

// Key implements session.Store.
func (d *Damaged) Key(_ context.Context, key string) (string, []byte, error) {
	at, ok := d.keys[key]
	if !ok {
		return "", nil, fmt.Errorf("store: key %q: %w", key, session.ErrNoRecord)
	}
	v, err := d.read(at)
	if err != nil {
		return "", nil, err
	}
	if len(v) < 2 || int(binary.BigEndian.Uint16(v)) > len(v)-2 {
		return "", nil, fmt.Errorf("store: key %q: value of %d bytes", key, len(v))
	}
	n := 2 + int(binary.BigEndian.Uint16(v))
	return string(v[2:n]), v[n:], nil
}

// KeyOf returns the idempotency key that session id was created with, and
// its data, when keys and keyof agree; "" and no error when the session has
// none; an error when they do not agree or cannot be read.
func (d *Damaged) KeyOf(ctx context.Context, id string) (string, []byte, error) {
	key, ok := d.keyOf[id]
	if !ok {
		if ks := d.keyOwners[id]; len(ks) > 0 { // keyof lost, keys kept
			return "", nil, fmt.Errorf("idempotency key %q names it, keyof does not", ks[0])
		}
		return "", nil, nil
	}
	if ks := d.keyOwners[id]; len(ks) > 1 {
		return "", nil, fmt.Errorf("idempotency keys %q all name it", ks)
	}
	owner, data, err := d.Key(ctx, key)
	switch {
	case errors.Is(err, session.ErrNoRecord):
		return "", nil, fmt.Errorf("its idempotency key %q is lost", key)
	case err != nil:
		return "", nil, err
	case owner != id:
		return "", nil, fmt.Errorf("its idempotency key %q names session %q", key, owner)
	}
	return key, data, nil
}

// errReadOnly is the error of a write to a Damaged.
var errReadOnly = errors.New("store: a damaged file is read only")

// Put implements session.Store: it fails.
func (d *Damaged) Put(context.Context, session.Record, *session.HistoryEntry) (uint64, error) {
	return 0, errReadOnly
}

// Delete implements session.Store: it fails.
func (d *Damaged) Delete(context.Context, string, uint64) error { return errReadOnly }

// UpdateLeases implements session.Store: it fails.
func (d *Damaged) UpdateLeases(context.Context, string, uint64, func(time.Time, []session.Lease) ([]session.Lease, error)) error {
	return errReadOnly
}

// Leases implements session.Store: a damaged file's leases are not read
// (salvage leaves them behind: a lost lease costs an evaluation twice,
// never a value).
func (d *Damaged) Leases(context.Context, string, uint64) ([]session.Lease, time.Time, error) {
	return nil, time.Now(), nil
}

// SalvageCounts is what Salvage wrote.
type SalvageCounts struct {
	Sessions, HistoryEntries, Keys int
}

// salvageBatch is about how many bytes Salvage writes per transaction.
const salvageBatch = 32 << 20

// Salvage writes the sessions ids of d, as they are stored (record, the
// meta of a meta-only write, version, history and, where withKey says so,
// idempotency key, byte for byte; not the leases), to a new file at path, which must not exist. On an error the new
// file is removed.
func Salvage(ctx context.Context, d *Damaged, ids []string, withKey func(id string) bool, path string) (n SalvageCounts, err error) {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("store: salvage to %s: the file exists (or cannot be read: %v)", path, err)
	}
	s, err := Open(path, nil)
	if err != nil {
		return n, fmt.Errorf("store: salvage to %s: %w", path, err)
	}
	defer func() {
		if cerr := s.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("store: salvage to %s: %w", path, cerr)
		}
		if err != nil {
			os.Remove(path)
		}
	}()
	for len(ids) > 0 {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		size := 0
		err := s.db.Update(func(tx *bbolt.Tx) error {
			for len(ids) > 0 && size < salvageBatch {
				id := ids[0]
				w, err := salvageOne(ctx, tx, d, id, withKey(id))
				if err != nil {
					return fmt.Errorf("session %s: %w", id, err)
				}
				size += w.bytes
				n.Sessions++
				n.HistoryEntries += w.hist
				n.Keys += w.keys
				ids = ids[1:]
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("store: salvage to %s: %w", path, err)
		}
	}
	return n, nil
}

type salvaged struct{ bytes, hist, keys int }

func salvageOne(ctx context.Context, tx *bbolt.Tx, d *Damaged, id string, withKey bool) (salvaged, error) {
	var w salvaged
	r, ok := d.find(id)
	if !ok {
		return w, session.ErrNoRecord
	}
	v, err := d.read(r.at)
	if err != nil {
		return w, err
	}
	b, err := tx.Bucket(bucketSessions).CreateBucket([]byte(id))
	if err != nil {
		return w, err
	}
	if err := b.Put(keyRecord, v); err != nil {
		return w, err
	}
	w.bytes += len(v)
	rec, err := d.Get(ctx, id) // the meta of metas, or of the log, over the record's
	if err != nil {
		return w, err
	}
	if _, ok := d.metas[id]; ok || d.held[id] != nil {
		m := binary.BigEndian.AppendUint64(nil, rec.Version)
		m = append(m, rec.Meta...)
		if err := tx.Bucket(bucketMetas).Put([]byte(id), m); err != nil {
			return w, err
		}
		w.bytes += len(m)
	}
	ents, err := d.History(ctx, id, 0, 0)
	if err != nil {
		return w, err
	}
	hb := tx.Bucket(bucketHist)
	for _, e := range ents {
		if err := hb.Put(histKey(id, e.Generation), e.Data); err != nil {
			return w, err
		}
		w.bytes += len(e.Data)
		w.hist++
	}
	if withKey {
		key, ok := d.keyOf[id]
		if !ok {
			return w, nil
		}
		kv, err := d.read(d.keys[key])
		if err != nil {
			return w, err
		}
		if err := tx.Bucket(bucketKeys).Put([]byte(key), kv); err != nil {
			return w, err
		}
		if err := tx.Bucket(bucketKeyOf).Put([]byte(id), []byte(key)); err != nil {
			return w, err
		}
		w.keys++
	}
	return w, nil
}
