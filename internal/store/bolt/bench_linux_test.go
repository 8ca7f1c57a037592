//go:build linux

package bolt

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/selfcma/selfcma/internal/session"
)

// BenchmarkToldValueSync is the disk's part of a told value, the commit
// of a partial tell (a Put of the meta only, fsync on), against what a
// log of told values would pay instead: the same bytes appended to a file
// written beforehand (no block to allocate, no size to change) and one
// fdatasync. bbolt syncs twice a commit: the pages, then the meta page
// that makes them current. The two alternate in one loop, so that a
// change of the machine's load falls on both; each reports its median
// (commit-µs, log-µs). ns/op is the pair.
func BenchmarkToldValueSync(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	st, err := Open(filepath.Join(dir, "x.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	meta := make([]byte, 1500) // a 10-D session's meta, about
	v, err := st.Put(ctx, session.Record{ID: "a", Meta: meta, State: make([]byte, 12<<10)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	const logSize = 16 << 20
	f, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, logSize)); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	rec := make([]byte, 8+len(meta)) // version ‖ meta, as metas holds it
	var commits, appends []time.Duration
	off := int64(0)
	for b.Loop() {
		t := time.Now()
		if v, err = st.Put(ctx, session.Record{ID: "a", Version: v, Meta: meta}, nil); err != nil {
			b.Fatal(err)
		}
		commits = append(commits, time.Since(t))
		t = time.Now()
		if off+int64(len(rec)) > logSize {
			off = 0
		}
		if _, err := f.WriteAt(rec, off); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil { // as bbolt syncs on Linux
			b.Fatal(err)
		}
		off += int64(len(rec))
		appends = append(appends, time.Since(t))
	}
	b.ReportMetric(medianMicros(commits), "commit-µs")
	b.ReportMetric(medianMicros(appends), "log-µs")
}

func medianMicros(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2]) / 1e3
}
