package kit_test

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/adapter/kit"
)

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriter) Close() error                { return nil }

func TestChannelRecv(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		max   int
		lines []string
		err   error
	}{
		{name: "lines", in: "{\"a\":1}\n{\"b\":2}\r\n", lines: []string{`{"a":1}`, `{"b":2}`}, err: io.EOF},
		{name: "a last line without its LF", in: "{\"a\":1}", lines: []string{`{"a":1}`}, err: io.EOF},
		{name: "blank lines are skipped", in: "\n\n{\"a\":1}\n", lines: []string{`{"a":1}`}, err: io.EOF},
		{name: "a line over the cap", in: strings.Repeat("x", 200) + "\n", max: 100, err: kit.ErrMessageTooLarge},
		{name: "only blank lines", in: strings.Repeat("\n", 100), err: errors.New("too many blank lines")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := kit.NewChannel(strings.NewReader(tc.in), nopWriter{}, tc.max, 0)
			var got []string
			var err error
			for {
				var b []byte
				if b, err = ch.Recv(); err != nil {
					break
				}
				got = append(got, string(b))
			}
			require.Equal(t, tc.lines, got)
			if errors.Is(tc.err, io.EOF) || errors.Is(tc.err, kit.ErrMessageTooLarge) {
				require.ErrorIs(t, err, tc.err)
			} else {
				require.ErrorContains(t, err, tc.err.Error())
			}
		})
	}
}

// TestChannelSendTimesOut: a peer that stops reading cannot block a
// sender past its timeout (the pipe fills, the write deadline fires).
func TestChannelSendTimesOut(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	ch := kit.NewChannel(r, w, 1<<20, 200*time.Millisecond)
	msg := []byte(strings.Repeat("x", 512<<10))
	var sendErr error
	for range 8 {
		if sendErr = ch.Send(msg); sendErr != nil {
			break
		}
	}
	require.ErrorIs(t, sendErr, os.ErrDeadlineExceeded)
	require.ErrorContains(t, ch.Send([]byte("a\nb")), "line feed", "never a raw LF")
}
