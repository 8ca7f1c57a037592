// Command server runs the selfcma service: ask/tell sessions of CMA-ES and
// self-CMA-ES over HTTP, persisted in a bbolt file, or in a PostgreSQL
// database that several servers share.
//
//	go run ./cmd/server [-addr host:port] [-db file|postgres://...] [-token secret] [-tls-cert file -tls-key file] [limits]
//	go run ./cmd/server -check -db file|postgres://...
//	go run ./cmd/server -salvage -db damaged -out new
//	go run ./cmd/server -copy-from file -db postgres://...
//
// Every flag falls back to an environment variable (SELFCMA_ADDR,
// SELFCMA_DB, SELFCMA_TOKEN, SELFCMA_MAX_DIMENSION, ...), then to its
// default. The first line it logs names the address it listens on. On
// SIGINT or SIGTERM it stops taking requests, finishes those under way and
// closes the store. It reads the whole bbolt file before it serves it, and
// refuses a damaged one. With -check it serves nothing: it reads the file
// (a backup, say) or the database as a start on it would, says what is
// wrong and exits. With -salvage it writes the sessions of a damaged file
// that read soundly to a new file. With -copy-from it copies every session
// of a bbolt file into the PostgreSQL database of -db, exactly, and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "selfcma:", err)
		}
		os.Exit(1)
	}
}

// run runs the mode the flags name: -version, -check (check.go),
// -salvage (salvage.go), -copy-from (copyfrom.go), or else serve
// (serve.go).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	switch {
	case cfg.PrintVersion:
		_, err := fmt.Fprintln(stdout, "selfcma", version())
		return err
	case cfg.Check:
		return check(ctx, cfg.DB, stdout)
	case cfg.Salvage:
		return salvage(ctx, cfg.DB, cfg.Out, stdout)
	case cfg.CopyFrom != "":
		return copySessions(ctx, cfg.CopyFrom, cfg.DB, stdout)
	}
	return serve(ctx, cfg, stdout)
}
