// The linters of make test (Makefile: lint), pinned: a module of their own,
// so that their dependencies stay out of the service's go.mod. Run them as
// go tool -modfile=internal/tools/lint/go.mod staticcheck ./...
module github.com/selfcma/selfcma/internal/tools/lint

go 1.26.0

tool (
	github.com/fzipp/gocyclo/cmd/gocyclo
	honnef.co/go/tools/cmd/staticcheck
)

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	github.com/fzipp/gocyclo v0.6.0 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)
