package bolt

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/selfcma/selfcma/internal/session"
	bbolt "go.etcd.io/bbolt"
)

// op is one write: fn runs inside a read-write transaction. An fn returns
// an error wrapping session.ErrNoRecord or session.ErrVersion only before it
// wrote anything, so the transaction can go on with the other writes; any
// other error rolls the whole transaction back.
type op struct {
	fn   func(*bbolt.Tx) error
	meta *metaWrite // a write of a meta only, which the log may take instead of fn; nil: fn's
	done chan result
}

// result is what a queued write receives: its outcome, or lead (the
// committing writer hands on to it, and it commits the queue).
type result struct {
	err  error
	lead bool
}

// write queues fn and returns when its transaction is committed (or
// failed). The writer that finds no commit under way leads: it commits
// up to maxBatch queued writes, its own first, and hands the lead to the
// first write still queued, or lets it go.
func (s *Store) write(fn func(*bbolt.Tx) error, meta *metaWrite) error {
	o := &op{fn: fn, meta: meta, done: make(chan result, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.queue = append(s.queue, o)
	if s.leading {
		s.mu.Unlock()
		r := <-o.done
		if !r.lead {
			return r.err
		}
		s.mu.Lock() // handed the lead: o is queue[0]
	}
	s.leading = true
	batch := slices.Clone(s.queue[:min(len(s.queue), maxBatch)])
	s.queue = slices.Delete(s.queue, 0, len(batch))
	s.mu.Unlock()

	s.lead(batch)
	return (<-o.done).err
}

// lead commits batch and hands the lead on. If the commit panics (bbolt
// panics on a corrupted file), the writes of the batch that have no answer
// get an error and the lead is handed on before the panic goes on up, so
// that no write waits for ever.
func (s *Store) lead(batch []*op) {
	defer func() {
		p := recover()
		if p != nil {
			for _, o := range batch {
				select {
				case o.done <- result{err: fmt.Errorf("store: commit panicked: %v", p)}:
				default: // answered already
				}
			}
		}
		s.mu.Lock()
		if len(s.queue) > 0 {
			s.queue[0].done <- result{lead: true}
		} else {
			s.leading = false
			s.idle.Broadcast()
		}
		s.mu.Unlock()
		if p != nil {
			panic(p)
		}
	}()
	s.commit(batch)
}

// errNothingWritten rolls back a transaction in which every write failed
// as expected (wrote nothing): it has nothing to commit, and a commit
// would cost the disk's syncs all the same.
var errNothingWritten = errors.New("nothing written")

// commit appends the batch to the told-value log if the log takes it, or
// runs it in one transaction, which folds the log first. If an fn fails
// unexpectedly, the transaction is rolled back and every fn runs again on
// its own.
func (s *Store) commit(batch []*op) {
	if s.logs(batch) && s.logBatch(batch) {
		return
	}
	errs := make([]error, len(batch))
	start := time.Now()
	folded := false
	err := s.db.Update(func(tx *bbolt.Tx) error {
		var err error
		if folded, err = s.fold(tx); err != nil {
			return err
		}
		wrote := folded
		for i, o := range batch {
			errs[i] = o.fn(tx)
			if errs[i] != nil && !expected(errs[i]) {
				return errs[i]
			}
			wrote = wrote || errs[i] == nil
		}
		if !wrote {
			return errNothingWritten
		}
		return nil
	})
	if errors.Is(err, errNothingWritten) {
		for i, o := range batch {
			o.done <- result{err: errs[i]}
		}
		return
	}
	if err == nil {
		if folded {
			s.folded()
		}
		s.commits.Add(1)
		if s.onCommit != nil {
			s.onCommit(len(batch), time.Since(start))
		}
		for i, o := range batch {
			o.done <- result{err: errs[i]}
		}
		return
	}
	if len(batch) == 1 {
		batch[0].done <- result{err: err}
		return
	}
	for _, o := range batch {
		o.done <- result{err: s.updateFolding(o.fn)}
	}
}

// expected reports whether err is the failure of a write that wrote
// nothing and lets the transaction go on.
func expected(err error) bool {
	return errors.Is(err, session.ErrNoRecord) || errors.Is(err, session.ErrVersion) || errors.Is(err, session.ErrKeyTaken)
}
