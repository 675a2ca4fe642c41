package adapter

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"

	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// floodSlack is how many messages beyond those it was sent an adapter may
// write before it is a flood (a late answer to a call that timed out is
// within it).
const floodSlack = 16

// stderrLineBytes caps one logged stderr line; stderrPerSecond caps the
// lines logged per second (the rest are counted and reported).
const (
	stderrLineBytes = 2048
	stderrPerSecond = 50
)

// instance is one running adapter process: its pipes, its JSON-RPC client
// and the goroutines that watch it (the exit waiter, the stderr pump, the
// client's reader), all of which end once it is killed.
type instance struct {
	cmd     *exec.Cmd
	client  *jrpc2.Client
	stdin   *os.File // write end
	stdout  *os.File // read end
	stderr  *os.File // read end
	started time.Time

	ended  chan struct{} // the process exited or its channel died
	exited chan struct{} // cmd.Wait returned
	endOne sync.Once
	kill1  sync.Once

	mu      sync.Mutex
	chanErr error
	exitErr error
}

// spawn starts the executable of p with pipes for its three streams and
// a client over them.
func spawn(p *Process) (*instance, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, err
	}
	cmd := exec.Command(p.Path)
	cmd.Env = p.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("start %s: %w", p.Path, err)
	}
	closeAll(inR, outW, errW) // the child's ends
	inst := &instance{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, started: p.now(),
		ended: make(chan struct{}), exited: make(chan struct{})}
	sendTimeout := min(p.cfg.CallTimeout, 5*time.Second)
	ch := &countingChannel{Channel: kit.NewChannel(outR, inW, p.cfg.MaxMessageBytes, sendTimeout)}
	inst.client = jrpc2.NewClient(ch, &jrpc2.ClientOptions{
		OnStop: func(_ *jrpc2.Client, err error) {
			inst.mu.Lock()
			if inst.chanErr == nil {
				inst.chanErr = err
			}
			inst.mu.Unlock()
			inst.end()
		},
		OnCancel: func(cli *jrpc2.Client, rsp *jrpc2.Response) {
			// Tell the adapter the node gave up on the call (best
			// effort: a dead or stuck adapter does not hear it).
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			defer cancel()
			_ = cli.Notify(ctx, kit.MethodCancelRequest, kit.CancelRequestParams{ID: []byte(rsp.ID())})
		},
	})
	pumpDone := make(chan struct{})
	go func() { defer close(pumpDone); pumpStderr(errR, p.log, p.red) }()
	go func() {
		err := cmd.Wait()
		inst.mu.Lock()
		if err != nil {
			inst.exitErr = fmt.Errorf("the adapter exited: %w", err)
		} else {
			inst.exitErr = errors.New("the adapter exited")
		}
		inst.mu.Unlock()
		close(inst.exited)
		_ = outR.Close() // ends the client's reader even if a child holds stdout
		select {
		case <-pumpDone:
		case <-time.After(time.Second):
		}
		_ = errR.Close()
		inst.end()
	}()
	return inst, nil
}

func (i *instance) pid() int { return i.cmd.Process.Pid }

func (i *instance) end() { i.endOne.Do(func() { close(i.ended) }) }

// stopCause says why the instance ended: its channel's error, unless that
// is only the end of its output, in which case the exit (waited for a
// moment) says more. It first waits a moment for the end to be recorded:
// a pending call learns that its client stopped before the client's stop
// hook has recorded why.
func (i *instance) stopCause() error {
	select {
	case <-i.ended:
	case <-time.After(time.Second):
	}
	i.mu.Lock()
	ce := i.chanErr
	i.mu.Unlock()
	if ce != nil && !errors.Is(ce, io.EOF) && !channel.IsErrClosing(ce) && !errors.Is(ce, os.ErrClosed) {
		return channelCause(ce)
	}
	select {
	case <-i.exited:
	case <-time.After(time.Second):
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.exitErr != nil {
		return i.exitErr
	}
	return ce
}

// channelCause names a channel failure with the package's errors.
func channelCause(err error) error {
	switch {
	case errors.Is(err, ErrFlood):
		return err
	case errors.Is(err, kit.ErrMessageTooLarge):
		return fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return fmt.Errorf("%w: unreadable output: %s", ErrProtocol, oneLine(err.Error(), 200))
}

// kill ends the instance at once.
func (i *instance) kill() {
	i.kill1.Do(func() {
		_ = i.cmd.Process.Kill()
		_ = i.stdout.Close()
		_ = i.client.Close()
	})
}

// stop ends the instance gracefully: stdin is closed (EOF is the
// adapter's cue to exit) and it is killed after grace.
func (i *instance) stop(ctx context.Context, grace time.Duration) {
	_ = i.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-i.exited:
	case <-t.C:
	case <-ctx.Done():
	}
	i.kill()
	select {
	case <-i.exited:
	case <-ctx.Done():
	}
}

// countingChannel fails the stream when the adapter writes more messages
// than it was sent (plus floodSlack): an adapter answers calls, it never
// speaks on its own.
type countingChannel struct {
	*kit.Channel
	sent, recv atomic.Int64
}

func (c *countingChannel) Send(msg []byte) error {
	c.sent.Add(1)
	return c.Channel.Send(msg)
}

func (c *countingChannel) Recv() ([]byte, error) {
	msg, err := c.Channel.Recv()
	if err != nil {
		return nil, err
	}
	if c.recv.Add(1) > c.sent.Load()+floodSlack {
		return nil, fmt.Errorf("%w: more messages than calls", ErrFlood)
	}
	return msg, nil
}

// pumpStderr logs the adapter's stderr line by line, redacted, clipped and
// rate-limited, until r ends.
func pumpStderr(r io.Reader, log *slog.Logger, red *redactor) {
	br := bufio.NewReaderSize(r, stderrLineBytes)
	var window time.Time
	logged, dropped := 0, 0
	for {
		line, err := br.ReadSlice('\n')
		long := errors.Is(err, bufio.ErrBufferFull)
		if len(line) > 0 {
			if now := time.Now(); now.Sub(window) >= time.Second {
				if dropped > 0 {
					log.Warn("adapter stderr lines dropped (more than 50 a second)", "dropped", dropped)
				}
				window, logged, dropped = now, 0, 0
			}
			if logged < stderrPerSecond {
				logged++
				log.Info("adapter stderr", "line", red.redact(oneLine(string(trimEOL(line)), stderrLineBytes)))
			} else {
				dropped++
			}
		}
		for long { // skip the rest of an over-long line
			_, err = br.ReadSlice('\n')
			long = errors.Is(err, bufio.ErrBufferFull)
		}
		if err != nil {
			return
		}
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}
