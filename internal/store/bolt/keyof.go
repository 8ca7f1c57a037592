package bolt

import (
	"bytes"
	"context"
	"fmt"

	"github.com/selfcma/selfcma/internal/session"
	"go.etcd.io/bbolt"
)

// KeyOf returns the idempotency key that the record of id was created with
// and the KeyData written with it; an error wrapping session.ErrNoRecord if
// it was created without one. (The copy of a file into PostgreSQL,
// `selfcma-server -copy-from`, carries the keys over with it.)
func (s *Store) KeyOf(ctx context.Context, id string) (string, []byte, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	var key string
	err := s.db.View(func(tx *bbolt.Tx) error {
		k := tx.Bucket(bucketKeyOf).Get([]byte(id))
		if k == nil {
			return fmt.Errorf("store: key of %s: %w", id, session.ErrNoRecord)
		}
		key = string(bytes.Clone(k))
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	of, data, err := s.Key(ctx, key)
	if err == nil && of != id {
		err = fmt.Errorf("store: key of %s: %q names session %s", id, key, of)
	}
	return key, data, err
}
