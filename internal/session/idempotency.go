package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
)

// MaxIdempotencyKey is the longest idempotency key, in bytes.
const MaxIdempotencyKey = 255

// idemKey is what a create with an idempotency key stores with the new
// session: the key and the fingerprint of the create's parameters.
type idemKey struct {
	key         string
	fingerprint []byte
}

// CreateIdempotent is Create, made safe to send again by p.IdempotencyKey:
// a create whose key a stored session was created with answers that
// session as it is now, and created false, if its parameters equal that
// create's (the values, not their spelling: 0.5 is 5e-1; metadata's
// spacing aside), and out_of_range if they do not. The key is freed when its session is
// deleted. Without a key every call creates a session.
func (m *Manager) CreateIdempotent(ctx context.Context, p CreateParams) (s Session, created bool, err error) {
	if p.IdempotencyKey == "" {
		s, err = m.create(ctx, p, nil)
		return s, err == nil, err
	}
	if err := checkIdempotencyKey(p.IdempotencyKey); err != nil {
		return Session{}, false, err
	}
	// The parameters are checked before the key is looked at, as without
	// one; but a warm start's session may have moved on or gone since the
	// create that made the key's session: then create checks them, when
	// the key has none.
	if p.WarmStart == "" {
		if _, _, _, err := m.limits.config(p); err != nil {
			return Session{}, false, err
		}
	}
	k := &idemKey{key: p.IdempotencyKey, fingerprint: fingerprint(p)}
	for attempt := 0; ; attempt++ {
		id, data, err := m.store.Key(ctx, k.key)
		switch {
		case err == nil:
			if !bytes.Equal(data, k.fingerprint) {
				return Session{}, false, errorf(CodeOutOfRange, "Idempotency-Key %q belongs to session %s, created with other parameters", k.key, id)
			}
			s, err := m.Get(ctx, id)
			if ErrorCode(err) == CodeNotFound && attempt == 0 {
				continue // deleted meanwhile, and its key with it
			}
			return s, false, err
		case !errors.Is(err, ErrNoRecord):
			return Session{}, false, internal("look up idempotency key", err)
		}
		s, err := m.create(ctx, p, k)
		if errors.Is(err, ErrKeyTaken) && attempt == 0 {
			continue // a create with the same key came first: answer its session
		}
		return s, err == nil, err
	}
}

func checkIdempotencyKey(key string) error {
	return checkToken("Idempotency-Key", key, MaxIdempotencyKey)
}

// checkToken checks that s, a client's name for something (what), has at
// most max bytes, all visible ASCII characters.
func checkToken(what, s string, max int) error {
	if len(s) > max {
		return errorf(CodeInvalid, "%s of %d bytes, want at most %d", what, len(s), max)
	}
	for i := range len(s) {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return errorf(CodeInvalid, "%s: byte %d is %q, want visible ASCII characters only", what, i, c)
		}
	}
	return nil
}

// fingerprint is the SHA-256 of p without its key, metadata compacted: two
// creates with equal parameters have equal fingerprints.
func fingerprint(p CreateParams) []byte {
	p.IdempotencyKey = ""
	if p.Metadata != nil {
		var buf bytes.Buffer
		if json.Compact(&buf, p.Metadata) == nil {
			p.Metadata = buf.Bytes()
		}
	}
	b, err := json.Marshal(p)
	if err != nil { // validated parameters are finite and marshal
		b = []byte(err.Error())
	}
	h := sha256.Sum256(b)
	return h[:]
}
