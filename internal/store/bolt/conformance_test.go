package bolt

import (
	"path/filepath"
	"testing"

	"github.com/selfcma/selfcma/internal/session"
	"github.com/selfcma/selfcma/internal/session/storetest"
)

// TestConformance runs the Store conformance suite that every store of the
// service passes (the PostgreSQL store runs it too).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store {
		s, err := Open(filepath.Join(t.TempDir(), "conformance.db"), &Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
