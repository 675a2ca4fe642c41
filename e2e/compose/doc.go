// Package compose tests the shipped docker-compose.yml and
// deploy/compose.external.yml against the real Docker engine: it builds
// the images FROM scratch over binaries built here (no registry), brings
// each file up under a project name of its own on free 127.0.0.1 ports,
// and reaches the containers only through those ports or `docker exec`.
//
// Where no Docker engine (or no compose command) answers, the tests skip
// with a message; with CI=true that is a failure. `go test -short` skips
// them too. Each stage's duration goes to the test log.
package compose
