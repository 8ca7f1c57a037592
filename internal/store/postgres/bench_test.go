package postgres

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/pgtest"
	"github.com/selfcma/selfcma/internal/session"
)

// BenchmarkPut is one durable Put of a record with a state of random
// (incompressible) bytes, as a tell writes it: the state and a history
// entry; and a Put of the meta only, as a partial tell writes it.
func BenchmarkPut(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{4 << 10, 12 << 10, 91 << 10, 171 << 10, 490 << 10} {
		for _, metaOnly := range []bool{false, true} {
			b.Run(fmt.Sprintf("state=%dKB/meta-only=%v", size>>10, metaOnly), func(b *testing.B) {
				st, err := Open(ctx, pgtest.DB(b), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				state := make([]byte, size)
				rng := rand.New(rand.NewPCG(1, 2))
				for i := range state {
					state[i] = byte(rng.Uint32())
				}
				meta := make([]byte, 1500)
				v, err := st.Put(ctx, session.Record{ID: "a", Meta: meta, State: state}, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(size))
				g := uint64(0)
				for b.Loop() {
					rec := session.Record{ID: "a", Version: v, Meta: meta, State: state}
					var h *session.HistoryEntry
					if metaOnly {
						rec.State = nil
					} else {
						h = &session.HistoryEntry{Generation: g, Data: meta[:200]}
						g++
					}
					if v, err = st.Put(ctx, rec, h); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkUpdateLeases is a claim's lease write: one lease added to a
// session's generation (asynchronous commit), as each claim makes it.
func BenchmarkUpdateLeases(b *testing.B) {
	ctx := context.Background()
	st, err := Open(ctx, pgtest.DB(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Put(ctx, session.Record{ID: "a", Meta: []byte("m"), State: []byte("s")}, nil); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		err := st.UpdateLeases(ctx, "a", 0, func(now time.Time, cur []session.Lease) ([]session.Lease, error) {
			return []session.Lease{{Index: i % 10, Worker: "w", Expires: now.Add(time.Minute)}}, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}
