package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/selfcma/selfcma/internal/httpapi"
	"github.com/selfcma/selfcma/internal/session"
)

// Config is the server's configuration.
type Config struct {
	Addr            string
	DB              string
	Token           string
	TLSCert, TLSKey string // PEM files; both empty: plain HTTP
	Limits          session.Limits
	MaxBodyBytes    int64
	MaxInflight     int64 // bytes of the bodies under way together
	CacheBytes      int64 // bytes of the decoded sessions kept in memory
	LogLevel        slog.Level
	IdleAfter       time.Duration // a running session not told for longer counts as idle in /metrics
	ShutdownTimeout time.Duration
	PrintVersion    bool // -version: print the build's version and exit
	Check           bool // -check: check the file or database of -db and exit
	Salvage         bool // -salvage: write the sound sessions of -db to -out and exit
	Out             string
	CopyFrom        string // -copy-from: copy this bbolt file's sessions into the database of -db and exit

	StoreTimeout time.Duration // -store-timeout: the deadline of each call of a PostgreSQL store
	StoreWait    time.Duration // -store-wait: how long a start waits for an unreachable database
}

// parseConfig reads flags, falling back to the environment, then to the
// defaults.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	c := Config{Limits: session.DefaultLimits()}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(out)
	str := func(p *string, name, env, def, usage string) {
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" (env "+env+")")
	}
	var errs []error
	num := func(p *int, name, env string, def int, usage string) {
		if v := getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				errs = append(errs, fmt.Errorf("%s=%q: want a positive integer", env, v))
			} else {
				def = n
			}
		}
		fs.IntVar(p, name, def, usage+" (env "+env+")")
	}
	str(&c.Addr, "addr", "SELFCMA_ADDR", "127.0.0.1:8080", "address to listen on; port 0 picks a free one")
	str(&c.DB, "db", "SELFCMA_DB", "selfcma.db", "the sessions' store: a bbolt file, or a postgres:// URL of a database that several servers share")
	str(&c.Token, "token", "SELFCMA_TOKEN", "", "bearer token that every /v1 request and the /ui pages (login form or bearer) require; empty = none")
	str(&c.TLSCert, "tls-cert", "SELFCMA_TLS_CERT", "", "PEM file of the certificate (chain) to serve HTTPS with, read again when it changes; with -tls-key")
	str(&c.TLSKey, "tls-key", "SELFCMA_TLS_KEY", "", "PEM file of the certificate's private key; with -tls-cert")
	num(&c.Limits.MaxDimension, "max-dimension", "SELFCMA_MAX_DIMENSION", c.Limits.MaxDimension, "largest dimension n of a session")
	num(&c.Limits.MaxPopulation, "max-population", "SELFCMA_MAX_POPULATION", c.Limits.MaxPopulation, "largest population size λ, also after restarts")
	num(&c.Limits.MaxBatch, "max-batch", "SELFCMA_MAX_BATCH", c.Limits.MaxBatch, "largest λ·n of a batch")
	num(&c.Limits.MaxSepDimension, "max-sep-dimension", "SELFCMA_MAX_SEP_DIMENSION", c.Limits.MaxSepDimension, "largest dimension n of a sep-cma-es session")
	num(&c.Limits.MaxSepBatch, "max-sep-batch", "SELFCMA_MAX_SEP_BATCH", c.Limits.MaxSepBatch, "largest λ·n of a sep-cma-es session's batch")
	body := httpapi.DefaultMaxBodyBytes
	num(&body, "max-body-bytes", "SELFCMA_MAX_BODY_BYTES", body, "largest request body")
	inflight := httpapi.DefaultMaxInflightBytes
	num(&inflight, "max-inflight-bytes", "SELFCMA_MAX_INFLIGHT_BYTES", inflight, "most bytes of request bodies under way together (each counted by the bytes read of it; a Content-Length that does not fit is refused before it is read; one body at a time may pass the limit); beyond, 503 with Retry-After")
	cache := session.DefaultCacheBytes
	num(&cache, "cache-bytes", "SELFCMA_CACHE_BYTES", cache, "most bytes of decoded sessions kept in memory between requests (each counted as what its engine says it holds), the least recently used forgotten beyond")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 15*time.Second, "how long a shutdown waits for requests under way")
	var level string
	str(&level, "log-level", "SELFCMA_LOG_LEVEL", "info", "least level logged: debug (every request), info (sessions created, restarted, stopped, deleted; refused requests with their error code), warn, error")
	idle := "24h"
	str(&idle, "idle-after", "SELFCMA_IDLE_AFTER", idle, "a running session not told anything for longer counts in /metrics' selfcma_sessions_idle")
	storeTimeout, storeWait := "10s", "5m"
	str(&storeTimeout, "store-timeout", "SELFCMA_STORE_TIMEOUT", storeTimeout, "deadline of every call of a PostgreSQL store (connecting included): a database that answers nothing within it (frozen, cut off) gets the request a 503 store_unavailable with Retry-After")
	str(&storeWait, "store-wait", "SELFCMA_STORE_WAIT", storeWait, "how long a start waits for a PostgreSQL database that is unreachable (down, restarting, out of connections), trying again with backoff up to 10 s and logging each try; 0: exit at once")
	fs.BoolVar(&c.PrintVersion, "version", false, "print the version of this build and exit")
	fs.BoolVar(&c.Check, "check", false, "check the file or database of -db (a backup, say) as a start on it would read it, print what is wrong, and exit; status 1 if anything is")
	fs.BoolVar(&c.Salvage, "salvage", false, "write every session of the damaged file of -db that reads soundly, byte for byte, to the new file of -out, list those it could not, and exit")
	fs.StringVar(&c.Out, "out", "", "the new file of -salvage (must not exist)")
	fs.StringVar(&c.CopyFrom, "copy-from", "", "copy every session of this bbolt file (its server stopped) into the PostgreSQL database of -db, exactly, and exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if len(errs) > 0 {
		return c, errors.Join(errs...)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := c.LogLevel.UnmarshalText([]byte(level)); err != nil {
		return c, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	if d, err := time.ParseDuration(idle); err != nil || d <= 0 {
		return c, fmt.Errorf("-idle-after %q: want a positive duration (90m, 24h)", idle)
	} else {
		c.IdleAfter = d
	}
	var err error
	if c.StoreTimeout, err = time.ParseDuration(storeTimeout); err != nil || c.StoreTimeout <= 0 {
		return c, fmt.Errorf("-store-timeout %q: want a positive duration (10s, 1m)", storeTimeout)
	}
	if c.StoreWait, err = time.ParseDuration(storeWait); err != nil || c.StoreWait < 0 {
		return c, fmt.Errorf("-store-wait %q: want a duration (0, 30s, 5m)", storeWait)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return c, errors.New("-tls-cert and -tls-key go together")
	}
	for _, v := range []int{c.Limits.MaxDimension, c.Limits.MaxPopulation, c.Limits.MaxBatch, body, inflight, cache} {
		if v < 1 {
			return c, fmt.Errorf("limits must be positive")
		}
	}
	c.MaxBodyBytes, c.MaxInflight, c.CacheBytes = int64(body), int64(inflight), int64(cache)
	return c, nil
}
