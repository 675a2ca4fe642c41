package adapter

import "errors"

// Named failures of an adapter. Provider methods return them wrapped in a
// *providers.Error (retryable where a restart may help), so errors.Is
// finds them.
var (
	// ErrUnavailable: the adapter is not running and is not started now
	// (it failed and waits out its restart backoff, its handshake failed,
	// or the node is stopping).
	ErrUnavailable = errors.New("adapter unavailable")
	// ErrTimeout: a call was not answered within adapters.call_timeout;
	// the process was killed.
	ErrTimeout = errors.New("adapter call timed out")
	// ErrProtocol: the adapter answered something that is not the
	// protocol (not JSON-RPC, a wrong shape, an unknown method, a value
	// over its cap).
	ErrProtocol = errors.New("adapter protocol violation")
	// ErrFlood: the adapter wrote messages nobody asked for; the process
	// was killed.
	ErrFlood = errors.New("adapter flooded its output")
	// ErrHandshake: describe failed or described something the node
	// refuses (another protocol version, another slug, a bad field).
	ErrHandshake = errors.New("adapter handshake failed")
)
