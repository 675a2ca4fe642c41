module github.com/agentproto/sentinel/adapters/gitlab

go 1.26.8

require (
	github.com/agentproto/sentinel v0.0.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/creachadair/jrpc2 v1.3.6 // indirect
	github.com/creachadair/mds v0.31.0 // indirect
	github.com/oklog/ulid/v2 v2.1.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sync v0.24.0 // indirect
)

replace github.com/agentproto/sentinel => ../..
