package bolt

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
)

// The told-value log (layout 6) is a file beside the database, path +
// LogSuffix, written whole (zeros) to logSize once, so that an append
// allocates no block and changes no size: one fdatasync makes it durable.
// A write of a meta only (a partial tell, a stop) is appended there
// instead of committed to bbolt, which syncs twice a commit.
//
// A record is one batch of the group commit, at an offset that is a
// multiple of logAlign:
//
//	magic (4) ‖ CRC-32C of what follows it (4) ‖ epoch (8) ‖ seq (8) ‖
//	len(payload) (4) ‖ entries (4) ‖ payload
//
// and the payload each entry's len(id) (2) ‖ id ‖ len(value) (4) ‖ value,
// the value as metas holds it: version (8) ‖ meta. The epoch is that of
// the database (meta "toldepoch"), seq counts the records of an epoch
// from 1. Every bbolt commit folds the metas the log holds into metas and
// sets a new, random, epoch in the same transaction: the records of other
// epochs are then ignored, and the log is written again from its start.
// The first commit after Open does so too, so that no record of a
// previous run (or of another copy of the file: a backup restored beside
// the log of its server) is ever continued.
//
// Reading stops at the first record that is not the next of the epoch. A
// record cut short by a crash fails its CRC: it was never acknowledged
// (its answer waits for the sync). A record of the epoch that does not
// read, with a later record of the epoch after it, is damage (an
// acknowledged record went bad): a writable Open refuses the file, Check
// reports it. (A damage of a record's magic or epoch bytes reads as the
// end of the log.)

// LogSuffix names the told-value log of the database at path: path +
// LogSuffix.
const LogSuffix = ".told"

const (
	logAlign  = 512
	logHeader = 32
)

// logSize is the size of the log (a variable for the tests): some 500
// records of a 10-D session's told value, fewer of larger ones.
var logSize int64 = 1 << 20

var (
	logMagic = []byte("STVL")
	logCRC   = crc32.MakeTable(crc32.Castagnoli)
	keyEpoch = []byte("toldepoch") // meta bucket: the epoch of the log's records, 8 bytes
)

// heldMeta is a told value of the log: id and version ‖ meta.
type heldMeta struct {
	id  string
	val []byte
}

// toldLog is the log of a writable store. It is opened (created if need
// be) at the first fold after Open, which also gives it a new epoch: until
// then nothing is written, neither to the log nor to the file, and a
// record of the file's epoch past those read (a torn one, or one of
// another copy of the file) is never continued.
type toldLog struct {
	f      *os.File // nil until the first fold
	path   string
	have   int64  // the size of the log file found at Open (-1: none)
	size   int64  // logSize
	off    int64  // where the next record goes
	epoch  uint64 // of the records written now
	next   uint64 // the epoch a fold under way commits
	seq    uint64 // of the last record written in epoch; 0: none since the last fold
	fresh  bool   // no fold since Open: appends wait for one
	noSync bool
	broken error // the log could not be created, or a write or sync failed
}

// appendRecord appends dst's record of ents for epoch and seq, padded to
// logAlign.
func appendRecord(dst []byte, epoch, seq uint64, ents []heldMeta) []byte {
	start := len(dst)
	dst = append(dst, logMagic...)
	dst = append(dst, 0, 0, 0, 0) // CRC, below
	dst = binary.BigEndian.AppendUint64(dst, epoch)
	dst = binary.BigEndian.AppendUint64(dst, seq)
	dst = append(dst, 0, 0, 0, 0) // len(payload), below
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(ents)))
	for _, e := range ents {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(e.id)))
		dst = append(dst, e.id...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(e.val)))
		dst = append(dst, e.val...)
	}
	binary.BigEndian.PutUint32(dst[start+24:], uint32(len(dst)-start-logHeader))
	binary.BigEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start+8:], logCRC))
	for (len(dst)-start)%logAlign != 0 {
		dst = append(dst, 0)
	}
	return dst
}

// readRecord reads the record at off of b if it is one of epoch with a
// seq of at least minSeq: its entries, seq and length (padded); ok false
// if there is none, or it does not read (why says why).
func readRecord(b []byte, off int64, epoch, minSeq uint64) (ents []heldMeta, seq uint64, n int64, why string) {
	if off+logHeader > int64(len(b)) {
		return nil, 0, 0, "the end of the file"
	}
	h := b[off : off+logHeader]
	switch {
	case string(h[:4]) != string(logMagic):
		return nil, 0, 0, "no record"
	case binary.BigEndian.Uint64(h[8:]) != epoch:
		return nil, 0, 0, "a record of another epoch"
	}
	seq = binary.BigEndian.Uint64(h[16:])
	plen := int64(binary.BigEndian.Uint32(h[24:]))
	if seq < minSeq {
		return nil, 0, 0, "an earlier record"
	}
	if off+logHeader+plen > int64(len(b)) {
		return nil, 0, 0, "a record running past the end of the file"
	}
	if crc32.Checksum(b[off+8:off+logHeader+plen], logCRC) != binary.BigEndian.Uint32(h[4:]) {
		return nil, 0, 0, "a record whose CRC does not match"
	}
	p, count := b[off+logHeader:off+logHeader+plen], binary.BigEndian.Uint32(h[28:])
	for range count {
		if len(p) < 2 || len(p) < 2+int(binary.BigEndian.Uint16(p))+4 {
			return nil, 0, 0, "a record whose entries do not read"
		}
		id := string(p[2 : 2+binary.BigEndian.Uint16(p)])
		p = p[2+len(id):]
		vlen := binary.BigEndian.Uint32(p)
		if uint64(vlen) > uint64(len(p)-4) || vlen < 8 {
			return nil, 0, 0, "a record whose entries do not read"
		}
		ents = append(ents, heldMeta{id: id, val: p[4 : 4+vlen : 4+vlen]})
		p = p[4+vlen:]
	}
	n = (logHeader + plen + logAlign - 1) / logAlign * logAlign
	return ents, seq, n, ""
}

// ofEpoch reports whether a record of epoch starts at off of b (whether
// or not it reads).
func ofEpoch(b []byte, off int64, epoch uint64) bool {
	return off+logHeader <= int64(len(b)) && string(b[off:off+4]) == string(logMagic) && binary.BigEndian.Uint64(b[off+8:]) == epoch
}

// scanLog reads the records of epoch in b, in order: their entries, where
// the next record goes, the seq of the last, and the damage: a record of
// the epoch that does not read, a later one after it.
func scanLog(b []byte, epoch uint64) (ents []heldMeta, end int64, seq uint64, probs []error) {
	var why string
	for {
		es, s, n, w := readRecord(b, end, epoch, 0)
		if w != "" || s != seq+1 {
			why = w
			if w == "" {
				why = fmt.Sprintf("record %d where %d was next", s, seq+1)
			}
			break
		}
		ents, seq, end = append(ents, es...), s, end+n
	}
	if !ofEpoch(b, end, epoch) {
		return ents, end, seq, nil // the end of the records written
	}
	for q := end + logAlign; q+logHeader <= int64(len(b)); q += logAlign {
		if _, s, _, w := readRecord(b, q, epoch, seq+2); w == "" {
			probs = append(probs, fmt.Errorf("told-value log: at byte %d %s, and record %d of the epoch follows at byte %d: acknowledged told values are lost", end, why, s, q))
			break
		}
	}
	return ents, end, seq, probs
}

// salvageLog returns the told values of every record of epoch in b that
// reads, wherever it lies (past a damaged record too), the later record's
// value of an id over the earlier's: -salvage keeps them.
func salvageLog(b []byte, epoch uint64) map[string][]byte {
	type rec struct {
		seq  uint64
		ents []heldMeta
	}
	var recs []rec
	for q := int64(0); q+logHeader <= int64(len(b)); q += logAlign {
		if ents, seq, _, why := readRecord(b, q, epoch, 1); why == "" {
			recs = append(recs, rec{seq, ents})
		}
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.seq, b.seq) })
	held := map[string][]byte{}
	for _, r := range recs {
		for _, e := range r.ents {
			held[e.id] = bytes.Clone(e.val)
		}
	}
	return held
}

// readLog reads the log of the database at path for epoch: its bytes
// (nil if there is no log), its entries and its damage.
func readLog(path string, epoch uint64) (b []byte, ents []heldMeta, probs []error, err error) {
	b, err = os.ReadFile(path + LogSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("told-value log: %w", err)
	}
	ents, _, _, probs = scanLog(b, epoch)
	return b, ents, probs, nil
}

// open opens the log file, creating it if it is missing or not of
// logSize. A log that cannot be created (a full disk, say) stays broken:
// the store commits every write to the file, as before layout 6.
func (l *toldLog) open() {
	if l.have != logSize {
		if err := createLog(l.path); err != nil {
			l.broken = fmt.Errorf("told-value log: %w", err)
			return
		}
	}
	f, err := os.OpenFile(l.path, os.O_RDWR, 0)
	if err != nil {
		l.broken = fmt.Errorf("told-value log: %w", err)
		return
	}
	l.f = f
}

// createLog writes the log at lp whole, zeros, synced, by a rename.
func createLog(lp string) error {
	return writeWhole(lp, func(f *os.File) error {
		zeros := make([]byte, 1<<20)
		for n := int64(0); n < logSize; n += int64(len(zeros)) {
			if _, err := f.Write(zeros[:min(int64(len(zeros)), logSize-n)]); err != nil {
				return err
			}
		}
		return nil
	})
}

// append writes rec at the log's end and syncs it.
func (l *toldLog) append(rec []byte) error {
	if _, err := l.f.WriteAt(rec, l.off); err != nil {
		return err
	}
	if !l.noSync {
		if err := fdatasync(l.f); err != nil {
			return err
		}
	}
	l.off += int64(len(rec))
	l.seq++
	return nil
}

// restart starts the log again at epoch after a fold committed it,
// opening it after the first: a log whose write failed is written again,
// one that could not be created stays broken.
func (l *toldLog) restart(epoch uint64) {
	l.epoch, l.off, l.seq = epoch, 0, 0
	switch {
	case l.fresh:
		l.fresh = false
		l.open()
	case l.f != nil:
		l.broken = nil
	}
}

func (l *toldLog) close() {
	if l.f != nil {
		l.f.Close()
	}
}
