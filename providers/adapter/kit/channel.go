package kit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/creachadair/jrpc2/channel"
)

// ErrMessageTooLarge is returned by a Channel's Recv for a line longer than
// its cap, and by Send for a message longer than it.
var ErrMessageTooLarge = errors.New("message larger than the line cap")

// deadliner is implemented by the write end of a pipe (*os.File).
type deadliner interface {
	SetWriteDeadline(t time.Time) error
}

// Channel is the protocol's framing: one JSON-RPC message per line
// (terminated by LF, no LF inside), each at most Max bytes either way. It
// implements the JSON-RPC library's channel.Channel. Unlike a plain line
// framing, a line over the cap is an error (ErrMessageTooLarge) instead of
// unbounded memory, and a Send to a peer that stops reading fails after
// SendTimeout when the writer supports deadlines (a pipe), instead of
// blocking its caller forever.
type Channel struct {
	r           *bufio.Reader
	w           io.WriteCloser
	max         int
	sendTimeout time.Duration
	mu          sync.Mutex // serialises Send
}

// NewChannel returns the framing over r and w. max <= 0 is
// DefaultMaxMessageBytes; sendTimeout <= 0 never times out a Send.
func NewChannel(r io.Reader, w io.WriteCloser, max int, sendTimeout time.Duration) *Channel {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	return &Channel{r: bufio.NewReaderSize(r, 64<<10), w: w, max: max, sendTimeout: sendTimeout}
}

var _ channel.Channel = (*Channel)(nil)

// Send writes msg and its LF. A message containing an LF (never produced by
// encoding/json) or longer than the cap is refused.
func (c *Channel) Send(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("message contains a line feed")
	}
	if len(msg) > c.max {
		return fmt.Errorf("send %d bytes: %w", len(msg), ErrMessageTooLarge)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.w.(deadliner); ok && c.sendTimeout > 0 {
		if err := d.SetWriteDeadline(time.Now().Add(c.sendTimeout)); err == nil {
			defer func() { _ = d.SetWriteDeadline(time.Time{}) }()
		}
	}
	out := make([]byte, 0, len(msg)+1)
	out = append(append(out, msg...), '\n')
	_, err := c.w.Write(out)
	return err
}

// Recv reads the next line (without its LF). Blank lines are skipped. A
// line over the cap is ErrMessageTooLarge; the stream is unusable after
// it. io.EOF ends the stream.
func (c *Channel) Recv() ([]byte, error) {
	for blank := 0; ; blank++ {
		if blank > maxBlankLines {
			return nil, errors.New("receive: too many blank lines")
		}
		var buf []byte
		for {
			chunk, err := c.r.ReadSlice('\n')
			if len(buf)+len(chunk) > c.max+1 {
				return nil, fmt.Errorf("receive: %w (%d bytes)", ErrMessageTooLarge, c.max)
			}
			buf = append(buf, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				if len(buf) > 0 && errors.Is(err, io.EOF) {
					break // a last line without its LF
				}
				return nil, err
			}
			break
		}
		line := bytes.TrimRight(buf, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}

// maxBlankLines bounds the blank lines Recv skips in a row: a peer that
// sends only blank lines is a flood, not a quiet peer.
const maxBlankLines = 64

// Close closes the write side.
func (c *Channel) Close() error { return c.w.Close() }
