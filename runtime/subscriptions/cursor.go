package subscriptions

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// cursorKeyName is the bucket key of the cursor signing key.
const cursorKeyName = "key.cursor"

// Cursors signs and verifies cursors with the key kept in the bucket: the
// first node to need it creates it (compare-and-set), every node reads the
// same, so every node accepts every node's cursors.
type Cursors struct {
	kv jetstream.KeyValue

	mu  sync.Mutex
	key []byte
}

// NewCursors returns the cursor codec whose key lives in the MCP Events
// bucket (Assets.KV).
func NewCursors(kv jetstream.KeyValue) *Cursors { return &Cursors{kv: kv} }

// Bind is what a cursor is bound to: a digest of the principal, the event
// name and the canonical arguments.
type Bind [8]byte

// BindOf returns the bind of a subscription's identity.
func BindOf(principal, name string, canonicalArgs []byte) Bind {
	h := sha256.New()
	for _, p := range [][]byte{[]byte(principal), []byte(name), canonicalArgs} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	var b Bind
	copy(b[:], h.Sum(nil))
	return b
}

func (c *Cursors) signingKey(ctx context.Context) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != nil {
		return c.key, nil
	}
	for attempt := 0; attempt < 3; attempt++ {
		e, err := c.kv.Get(ctx, cursorKeyName)
		if err == nil && len(e.Value()) == 32 {
			c.key = e.Value()
			return c.key, nil
		}
		if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("read the cursor key: %w", err)
		}
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("mint the cursor key: %w", err)
		}
		if _, err := c.kv.Create(ctx, cursorKeyName, k); err == nil {
			c.key = k
			return k, nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("store the cursor key: %w", err)
		}
	}
	return nil, errors.New("the cursor key could not be read or created")
}

// Sign returns the opaque cursor of feed position seq under bind.
func (c *Cursors) Sign(ctx context.Context, seq uint64, b Bind) (string, error) {
	key, err := c.signingKey(ctx)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 16, 32)
	binary.BigEndian.PutUint64(buf, seq)
	copy(buf[8:], b[:])
	m := hmac.New(sha256.New, key)
	m.Write(buf)
	buf = append(buf, m.Sum(nil)[:16]...)
	return base64.RawURLEncoding.EncodeToString(buf), nil
}

// Verify returns the position of a cursor signed under bind; a malformed,
// tampered or foreign cursor (another subscription's, another
// deployment's) is invalid_cursor.
func (c *Cursors) Verify(ctx context.Context, cursor string, b Bind) (uint64, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) != 32 {
		return 0, sentinel.Errorf(sentinel.CodeInvalidCursor, "cursor is not one this server issued")
	}
	key, err := c.signingKey(ctx)
	if err != nil {
		return 0, err
	}
	m := hmac.New(sha256.New, key)
	m.Write(raw[:16])
	if !hmac.Equal(m.Sum(nil)[:16], raw[16:]) {
		return 0, sentinel.Errorf(sentinel.CodeInvalidCursor, "cursor is not one this server issued (tampered, or from another server)")
	}
	if !hmac.Equal(raw[8:16], b[:]) {
		return 0, sentinel.Errorf(sentinel.CodeInvalidCursor, "cursor belongs to another subscription (other name or arguments)")
	}
	return binary.BigEndian.Uint64(raw[:8]), nil
}
