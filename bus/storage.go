package bus

import (
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// JetStream's error codes for a write refused for want of storage: the
// server's or account's storage limit (nats.max_store) is reached.
const (
	errCodeInsufficientResources   jetstream.ErrorCode = 10023
	errCodeStorageResourceExceeded jetstream.ErrorCode = 10047
)

// StorageFull reports whether err is JetStream refusing a write because
// its storage is full.
func StorageFull(err error) bool {
	var apiErr *jetstream.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	return apiErr.ErrorCode == errCodeInsufficientResources || apiErr.ErrorCode == errCodeStorageResourceExceeded
}

// StorageCoded gives a storage-full refusal the domain code
// sentinel.CodeStorageFull (503 on every surface); other errors pass
// through unchanged.
func StorageCoded(err error) error {
	if err == nil || !StorageFull(err) {
		return err
	}
	return sentinel.Wrap(sentinel.CodeStorageFull, err, "storage is full: JetStream refused the write (nats.max_store or the disk); nothing was stored")
}
