module github.com/idem-sqlite/idem/bindings/go

go 1.22

require (
	github.com/canonical/go-dqlite v1.11.5
	github.com/mattn/go-sqlite3 v1.14.53
)

require (
	github.com/Rican7/retry v0.3.0 // indirect
	github.com/ghodss/yaml v1.0.0 // indirect
	github.com/google/renameio v1.0.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	golang.org/x/sync v0.0.0-20210220032951-036812b2e83c // indirect
	golang.org/x/sys v0.0.0-20210616094352-59db8d763f22 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)
