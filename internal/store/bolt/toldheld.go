package bolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"time"

	bbolt "go.etcd.io/bbolt"
)

// The store's side of the told-value log (toldlog.go): the metas the log
// holds (held), which the reads take over those of the file when their
// version is higher, and the fold that commits them into metas.
//
// Only the committing writer (the group commit's leader, Open, Close)
// appends, folds and changes held; the reads take held under heldMu
// before their transaction, so that a fold committed meanwhile is seen in
// the one or the other.

// metaWrite is a write of a meta only (a partial tell, a stop) that the
// log may take: id's version is to be version, and val (next version ‖
// meta) its value.
type metaWrite struct {
	id      string
	version uint64
	val     []byte
}

// readEpoch returns the epoch of the log's records (0 before layout 6).
func readEpoch(tx *bbolt.Tx) uint64 {
	if m := tx.Bucket(bucketMeta); m != nil {
		if v := m.Get(keyEpoch); len(v) == 8 {
			return binary.BigEndian.Uint64(v)
		}
	}
	return 0
}

// startLog reads the log of the database at path: its metas are held
// (and a read-only store keeps what is wrong with it for Check). A
// writable store refuses a damaged log; it writes nothing until its first
// write, whose commit folds the held metas into the file and starts the
// log at a new epoch (toldLog).
func (s *Store) startLog(path string, noSync, readOnly bool) error {
	var epoch uint64
	s.db.View(func(tx *bbolt.Tx) error {
		epoch = readEpoch(tx)
		return nil
	})
	b, ents, probs, err := readLog(path, epoch)
	if err != nil {
		return err
	}
	s.held = make(map[string][]byte, len(ents))
	for _, e := range ents {
		s.held[e.id] = bytes.Clone(e.val)
	}
	if readOnly {
		s.logProblems = probs
		return nil
	}
	if len(probs) > 0 {
		return &DamagedError{Problems: probs}
	}
	have := int64(len(b))
	if b == nil {
		have = -1
	}
	s.log = &toldLog{path: path + LogSuffix, have: have, size: logSize, epoch: epoch, fresh: true, noSync: noSync}
	s.unfolded.Store(len(s.held) > 0)
	return nil
}

// heldOf returns the held value of id (version ‖ meta), nil if none.
func (s *Store) heldOf(id string) []byte {
	s.heldMu.RLock()
	defer s.heldMu.RUnlock()
	return s.held[id]
}

// heldAll returns a copy of held (nil if it is empty).
func (s *Store) heldAll() map[string][]byte {
	s.heldMu.RLock()
	defer s.heldMu.RUnlock()
	if len(s.held) == 0 {
		return nil
	}
	return maps.Clone(s.held)
}

// overHeld returns version and meta of a stored record, or those of h
// (held) if h's version is higher.
func overHeld(h []byte, version uint64, meta []byte) (uint64, []byte) {
	if len(h) >= 8 && binary.BigEndian.Uint64(h) > version {
		return binary.BigEndian.Uint64(h), h[8:]
	}
	return version, meta
}

// fold puts the held metas into metas (those above the stored version,
// of records that exist) and sets a new epoch, in tx; it reports
// whether there was anything to fold. Only the committing writer calls it.
func (s *Store) fold(tx *bbolt.Tx) (bool, error) {
	if s.log == nil || (s.log.seq == 0 && len(s.held) == 0 && !s.log.fresh) {
		return false, nil
	}
	metas := tx.Bucket(bucketMetas)
	for id, val := range s.held {
		k := []byte(id)
		if record(tx, k) == nil || binary.BigEndian.Uint64(val) <= storedVersion(tx, k) {
			continue
		}
		if err := metas.Put(k, val); err != nil {
			return false, err
		}
	}
	s.log.next = newEpoch(s.log.epoch)
	return true, tx.Bucket(bucketMeta).Put(keyEpoch, binary.BigEndian.AppendUint64(nil, s.log.next))
}

// folded starts the log again after a commit that folded it.
func (s *Store) folded() {
	s.heldMu.Lock()
	clear(s.held)
	s.heldMu.Unlock()
	s.log.restart(s.log.next)
	s.unfolded.Store(false)
}

// updateFolding commits fn in a transaction that folds the log first.
func (s *Store) updateFolding(fn func(*bbolt.Tx) error) error {
	f := false
	err := s.db.Update(func(tx *bbolt.Tx) error {
		var err error
		if f, err = s.fold(tx); err != nil {
			return err
		}
		return fn(tx)
	})
	if err == nil && f {
		s.folded()
	}
	return err
}

// logs reports whether the log takes batch: writes of a meta only, all.
func (s *Store) logs(batch []*op) bool {
	if s.log == nil || s.log.fresh || s.log.broken != nil {
		return false
	}
	for _, o := range batch {
		if o.meta == nil {
			return false
		}
	}
	return true
}

// logBatch appends the writes of batch that find their version to the log
// in one record, syncs it, holds them and answers every write. It returns
// false, having done nothing, if the record does not fit in the log: the
// batch is then committed to the file (which folds the log).
func (s *Store) logBatch(batch []*op) bool {
	errs := make([]error, len(batch))
	pending := map[string][]byte{}
	var ents []heldMeta
	s.db.View(func(tx *bbolt.Tx) error {
		for i, o := range batch {
			m := o.meta
			got := storedVersion(tx, []byte(m.id))
			if p, ok := pending[m.id]; ok && got != 0 {
				got = binary.BigEndian.Uint64(p)
			} else if got != 0 {
				got, _ = overHeld(s.held[m.id], got, nil)
			}
			if got != m.version {
				errs[i] = putVersionError(m.id, m.version, got)
				continue
			}
			val := bytes.Clone(m.val)
			pending[m.id] = val
			ents = append(ents, heldMeta{id: m.id, val: val})
		}
		return nil
	})
	if len(ents) > 0 {
		rec := appendRecord(nil, s.log.epoch, s.log.seq+1, ents)
		if s.log.off+int64(len(rec)) > s.log.size {
			return false
		}
		start := time.Now()
		if err := s.log.append(rec); err != nil {
			s.log.broken = err
			for i := range errs {
				if errs[i] == nil {
					errs[i] = fmt.Errorf("told-value log: %w", err)
				}
			}
		} else {
			s.heldMu.Lock()
			for _, e := range ents {
				s.held[e.id] = e.val
			}
			s.heldMu.Unlock()
			s.unfolded.Store(true)
			s.commits.Add(1)
			if s.onCommit != nil {
				s.onCommit(len(batch), time.Since(start))
			}
		}
	}
	for i, o := range batch {
		o.done <- result{err: errs[i]}
	}
	return true
}
