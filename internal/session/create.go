package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// Create validates p, starts the optimizer (which samples the first batch)
// and persists the session in one write. With p.IdempotencyKey it is
// CreateIdempotent.
//
// With p.WarmStart, the session starts from another: x0 is that session's
// mean as it is now (with bounds, its image in that session's box), and its
// best point, if it has one, is injected into the first batch (as
// candidate 0, its step clipped in the update). p.X0 may then be nil; if
// given, it must have that session's dimension, and is replaced. Both
// points must lie within p.Bounds.
func (m *Manager) Create(ctx context.Context, p CreateParams) (Session, error) {
	s, _, err := m.CreateIdempotent(ctx, p)
	return s, err
}

// create is Create of a new session, stored with key k (nil: none).
func (m *Manager) create(ctx context.Context, p CreateParams, k *idemKey) (Session, error) {
	alg, sp, cfg, err := m.prepare(ctx, p)
	if err != nil {
		return Session{}, err
	}
	if p.Metadata != nil {
		t := bytes.TrimLeft(p.Metadata, " \t\r\n")
		if !json.Valid(p.Metadata) || len(t) == 0 || t[0] != '{' {
			return Session{}, errorf(CodeOutOfRange, "metadata is not a JSON object")
		}
	}
	if p.Seed != nil {
		cfg.Seed = *p.Seed
	} else {
		cfg.Seed = randomSeed()
	}
	o, err := newOptimizer(alg, sp, cfg)
	if err != nil {
		// config has checked what the engines check.
		return Session{}, errorf(CodeOutOfRange, "%v", err)
	}
	now := m.now().UTC()
	md := &meta{ID: m.newID(), Name: p.Name, Algorithm: alg, CreatedAt: now, UpdatedAt: now}
	if md.Constrained, err = newConstrained(p.Constraints, len(cfg.X0)); err != nil {
		return Session{}, errorf(CodeOutOfRange, "%v", err) // config has checked it
	}
	if p.Metadata != nil {
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.Metadata); err != nil {
			return Session{}, errorf(CodeOutOfRange, "metadata is not a JSON object")
		}
		md.Metadata = buf.Bytes()
	}
	buf := stateBufs.Get().(*[]byte)
	defer stateBufs.Put(buf)
	rec, err := encodeRecord(md, o, buf)
	if err != nil {
		return Session{}, internal("create", err)
	}
	if k != nil {
		rec.Key, rec.KeyData = k.key, k.fingerprint
	}
	v, err := m.store.Put(context.WithoutCancel(ctx), rec, nil)
	if err != nil {
		return Session{}, internal("store new session", err)
	}
	l := &loaded{version: v, meta: md, opt: o, size: heldBytes(o)}
	e := m.acquire(md.ID)
	e.l = l
	s := view(l)
	m.release(e)
	m.emit(EventCreated, s, 0)
	return s, nil
}

// encodeRecord returns the record of a write of o with md, which it
// summarizes from o first; the state is encoded in *buf, a buffer of
// stateBufs (and grows it).
func encodeRecord(md *meta, o optimizer, buf *[]byte) (Record, error) {
	md.summarize(o)
	state, err := o.AppendBinary((*buf)[:0])
	*buf = state
	if err != nil {
		return Record{}, fmt.Errorf("encode state: %w", err)
	}
	mb, err := encodeMeta(md)
	if err != nil {
		return Record{}, fmt.Errorf("encode session record: %w", err)
	}
	return Record{ID: md.ID, Meta: mb, State: state}, nil
}
