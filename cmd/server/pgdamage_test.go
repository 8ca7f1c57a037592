package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/selfcma/selfcma/internal/pgtest"
)

// Damaged rows of PostgreSQL (written by hand, as a bad restore or a tool
// might): a request to such a session answers code damaged naming the
// session and what is wrong, not a bare internal error; -check lists each;
// the other sessions are served.
func TestPostgresDamagedSession(t *testing.T) {
	bin := serverBinary(t)
	db := pgtest.DB(t)
	p, err := launch(bin, "-addr", "127.0.0.1:0", "-db", db)
	if err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	ids := make([]string, 4)
	for i := range ids {
		var s e2eSession
		json.Unmarshal(must(t, "POST", p.base+"/v1/sessions", createBody([]string{"cma-es", "self-cma-es"}[i%2]), 201), &s)
		ids[i] = s.ID
	}
	// The server caches decoded sessions: a new one reads the rows.
	p.kill()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, d := range []struct {
		id, sql string
	}{
		{ids[0], "UPDATE sessions SET version = 9223372036854775807 WHERE id = $1"},
		{ids[2], "UPDATE sessions SET meta = 'junk' WHERE id = $1"},
		{ids[1], "UPDATE sessions SET chunks = 3 WHERE id = $1"}, // 3 chunks counted, none stored
	} {
		if tag, err := conn.Exec(ctx, d.sql, []byte(d.id)); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s: %v %v", d.sql, tag, err)
		}
	}
	if p, err = launch(bin, "-addr", "127.0.0.1:0", "-db", db); err != nil {
		t.Fatal(err)
	}
	defer p.kill()
	for _, c := range []struct {
		id, method, path, what string
	}{
		{ids[0], "POST", "/tell", "version 9223372036854775807"},
		{ids[2], "GET", "", "the record does not decode"},
		{ids[1], "GET", "", "chunks"},
	} {
		var body any
		if c.method == "POST" {
			var b e2eBatch
			json.Unmarshal(must(t, "GET", p.base+"/v1/sessions/"+c.id+"/ask", nil, 200), &b)
			body = tellOf(b)
		}
		code, b, err := send(c.method, p.base+"/v1/sessions/"+c.id+c.path, body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		json.Unmarshal(b, &e)
		if err != nil || e.Error.Code != "damaged" || !strings.Contains(e.Error.Message, c.id) || !strings.Contains(e.Error.Message, c.what) {
			t.Errorf("%s %s of a damaged session: %d %s %v; want code damaged naming it and %q", c.method, c.path, code, b, err, c.what)
		}
	}
	must(t, "GET", p.base+"/v1/sessions/"+ids[3], nil, 200)
	b, err := exec.Command(bin, "-check", "-db", db).CombinedOutput()
	out := string(b)
	if err == nil {
		t.Errorf("-check of the damaged database exits 0:\n%s", out)
	}
	for _, want := range []string{"session " + ids[0] + ": version 9223372036854775807", "session " + ids[1] + ":", "session " + ids[2] + ":", "sessions 4,"} {
		if !strings.Contains(out, want) {
			t.Errorf("-check lacks %q:\n%s", want, out)
		}
	}
}
