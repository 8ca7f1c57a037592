package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	store "github.com/selfcma/selfcma/internal/store/bolt"
	bolt "go.etcd.io/bbolt"
)

// checkRun runs the server with -check on db and returns what it printed.
func checkRun(db string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-check", "-db", db}, func(string) string { return "" }, &out)
	return out.String(), err
}

// -check reads a sound file and a backup of it as sound, names a fault
// planted in the file and fails, creates no file, and says that the file of
// a running server is in use.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	base, _, stop := startRun(t, []string{"-addr", "127.0.0.1:0", "-db", db}, nil)
	var ids []string
	for _, alg := range []string{"cma-es", "self-cma-es"} {
		code, body := request(t, "POST", base+"/v1/sessions", "", `{"x0": [1, 2, 3], "sigma0": 1, "seed": 4, "population_size": 7, "algorithm": "`+alg+`"}`)
		id := regexp.MustCompile(`"id":"([^"]+)"`).FindSubmatch(body)
		if code != 201 || id == nil {
			t.Fatalf("create: %d %s", code, body)
		}
		ids = append(ids, string(id[1]))
		for g := range 3 {
			if code, body := request(t, "POST", base+"/v1/sessions/"+ids[len(ids)-1]+"/tell", "",
				`{"generation": `+strconv.Itoa(g)+`, "fitness": [1, 2, 3, 4, 5, 6, 7]}`); code != 200 {
				t.Fatalf("tell: %d %s", code, body)
			}
		}
	}
	if out, err := checkRun(db); err == nil || !strings.Contains(err.Error(), "in use by another process (a running server?)") {
		t.Errorf("checked the file of a running server: %v\n%s", err, out)
	}
	// A backup of the running server's file, as docs/operations.md says.
	code, backup := request(t, "GET", base+"/v1/backup", "", "")
	if code != 200 {
		t.Fatalf("backup: %d", code)
	}
	bak := filepath.Join(dir, "backup.db")
	if err := os.WriteFile(bak, backup, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := checkRun(bak); err != nil || out != "checked "+bak+": sessions 2, history entries 6, problems 0\n" {
		t.Errorf("the backup: %v\n%s", err, out)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	out, err := checkRun(db)
	if err != nil || out != "checked "+db+": sessions 2, history entries 6, problems 0\n" {
		t.Fatalf("a sound file: %v\n%s", err, out)
	}

	// The same file as a server of layout 3 wrote it (records as values of
	// the sessions bucket): checked as migrated, left as it was.
	flat := filepath.Join(dir, "flat.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(flat, b, 0o600); err != nil {
		t.Fatal(err)
	}
	flatten := func(tx *bolt.Tx) error {
		sess := tx.Bucket([]byte("sessions"))
		for _, id := range ids {
			r := bytes.Clone(sess.Bucket([]byte(id)).Get([]byte("r")))
			if err := sess.DeleteBucket([]byte(id)); err != nil {
				return err
			}
			if err := sess.Put([]byte(id), r); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("3"))
	}
	if err := updateFile(flat, flatten); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(flat)
	out, err = checkRun(flat)
	if err != nil || out != flat+" is of an earlier layout: checking a copy migrated to layout "+strconv.Itoa(store.SchemaVersion)+", as a server would migrate it\n"+
		"checked "+flat+": sessions 2, history entries 6, problems 0\n" {
		t.Errorf("a file of layout 3: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(flat); !bytes.Equal(after, before) {
		t.Error("-check changed the file of layout 3")
	}
	if m, _ := filepath.Glob(flat + ".*"); len(m) > 0 {
		t.Errorf("-check left %q beside the file", m)
	}

	// An entry of the second session's history removed, as a damaged copy
	// would have lost it.
	err = updateFile(db, func(tx *bolt.Tx) error {
		k := binary.BigEndian.AppendUint16(nil, uint16(len(ids[1])))
		return tx.Bucket([]byte("hist")).Delete(binary.BigEndian.AppendUint64(append(k, ids[1]...), 1))
	})
	if err != nil {
		t.Fatal(err)
	}
	out, err = checkRun(db)
	want := "session " + ids[1] + ": history: generations 1 to 1 are missing\n" +
		"checked " + db + ": sessions 2, history entries 5, problems 1\n" + damagedAdvice(db) + "\n"
	if err == nil || out != want {
		t.Errorf("a file with a fault: %v\n%s\nwant\n%s", err, out, want)
	}

	missing := filepath.Join(dir, "missing.db")
	if _, err := checkRun(missing); err == nil {
		t.Error("checked a file that does not exist")
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-check made the file: %v", err)
	}
}

// updateFile runs fn in a write transaction on the bbolt file at path.
func updateFile(path string, fn func(*bolt.Tx) error) error {
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		return err
	}
	err = db.Update(fn)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}
