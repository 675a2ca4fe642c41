package app_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// jetStreamOf is a JetStream context on a's own connection, for tests that
// read or write the store beside the node.
func jetStreamOf(t testing.TB, a *app.App) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(a.NATSConn())
	require.NoError(t, err)
	return js
}

// bucketOf is one of a's provisioned buckets, by name.
func bucketOf(t testing.TB, a *app.App, name string) jetstream.KeyValue {
	t.Helper()
	kv, err := a.Bus.KeyValue(context.Background(), name)
	require.NoError(t, err)
	return kv
}
