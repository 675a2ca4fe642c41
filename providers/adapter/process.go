package adapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/creachadair/jrpc2"

	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// stableAfter is how long an instance must have run for its failure to
// count as the first of a new series (the backoff starts over).
const stableAfter = time.Minute

// Process is the node's ownership of one adapter executable: at most one
// running instance, started on first use (Call), handshaken with describe,
// killed when it crashes, hangs past a call's timeout, floods or breaks
// the protocol, then started again on a later call once its backoff has
// passed (RestartMin doubling to RestartMax). Stop ends it for good. Every
// method is safe for concurrent use.
type Process struct {
	Slug string
	Path string

	cfg    Config
	log    *slog.Logger
	env    []string
	red    *redactor
	now    func() time.Time
	sem    chan struct{}
	onDesc func(kit.Description) error // validates a description

	mu       sync.Mutex
	cur      *instance
	starting chan struct{} // closed when the start in progress ends
	desc     *kit.Description
	lastErr  error
	failures int
	retryAt  time.Time
	starts   int
	stopped  bool
}

// newProcess returns the owner of the executable at path (not started).
func newProcess(f Found, cfg Config, log *slog.Logger, environ []string, red *redactor, now func() time.Time, check func(kit.Description) error) *Process {
	env := adapterEnv(f.Slug, environ)
	red.learn(secretEnvValues(env)...)
	return &Process{Slug: f.Slug, Path: f.Path, cfg: cfg, log: log, env: env, red: red, now: now,
		sem: make(chan struct{}, cfg.MaxInFlight), onDesc: check}
}

// State is what the node knows of an adapter process, for listings.
type State struct {
	Running bool
	// Described is the last description a handshake returned (nil
	// before the first).
	Described *kit.Description
	// LastError is why the last instance ended or the last start failed
	// (nil while healthy).
	LastError error
	// RetryAt is when the next start may happen (zero: now).
	RetryAt time.Time
	// Starts counts the instances started.
	Starts int
}

// State reports the process's state without starting it.
func (p *Process) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := State{Running: p.cur != nil, Described: p.desc, LastError: p.lastErr, Starts: p.starts}
	if p.cur == nil && p.now().Before(p.retryAt) {
		st.RetryAt = p.retryAt
	}
	return st
}

// Describe returns the adapter's description, starting it when it has
// none yet (bounded by the handshake timeout); a start that fails (or
// waits out its backoff) returns the error.
func (p *Process) Describe(ctx context.Context) (kit.Description, error) {
	p.mu.Lock()
	d := p.desc
	p.mu.Unlock()
	if d != nil {
		return *d, nil
	}
	if _, err := p.ensure(ctx); err != nil {
		return kit.Description{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.desc == nil {
		return kit.Description{}, fmt.Errorf("%w: no description", ErrUnavailable)
	}
	return *p.desc, nil
}

// Call sends method with params and decodes the answer into out (nil:
// ignored), within ctx and at most adapters.call_timeout. An error the
// adapter answered is a *jrpc2.Error (kit.FromRPC reads its
// classification); the node's own failures wrap ErrUnavailable,
// ErrTimeout, ErrProtocol or ErrFlood.
func (p *Process) Call(ctx context.Context, method string, params, out any) error {
	select {
	case p.sem <- struct{}{}:
		defer func() { <-p.sem }()
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	inst, err := p.ensure(ctx)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeoutCause(ctx, p.cfg.CallTimeout, ErrTimeout)
	defer cancel()
	rsp, err := inst.client.Call(cctx, method, params)
	if err != nil {
		return p.callFailed(ctx, cctx, inst, method, err)
	}
	if out == nil {
		return nil
	}
	if err := rsp.UnmarshalResult(out); err != nil {
		return fmt.Errorf("%w: %s answered a malformed result: %s", ErrProtocol, method, p.red.redact(oneLine(err.Error(), 200)))
	}
	return nil
}

// callFailed classifies a failed call: the caller giving up is its own
// error; a timeout or a dead channel kills the instance.
func (p *Process) callFailed(ctx, cctx context.Context, inst *instance, method string, err error) error {
	var je *jrpc2.Error
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(context.Cause(cctx), ErrTimeout) && cctx.Err() != nil:
		cause := fmt.Errorf("%w: %s got no answer within %s", ErrTimeout, method, p.cfg.CallTimeout)
		p.fail(inst, cause)
		return cause
	case errors.As(err, &je) && !inst.client.IsStopped():
		if je.Code == jrpc2.MethodNotFound {
			return fmt.Errorf("%w: the adapter does not implement %s", ErrProtocol, method)
		}
		return je
	}
	cause := inst.stopCause()
	if cause == nil {
		cause = err
	}
	p.fail(inst, cause)
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, method, cause)
}

// ensure returns the running instance, starting one when there is none
// and the backoff allows; concurrent callers wait for one start.
func (p *Process) ensure(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	for {
		switch {
		case p.stopped:
			p.mu.Unlock()
			return nil, fmt.Errorf("%w: the node is stopping", ErrUnavailable)
		case p.cur != nil:
			inst := p.cur
			p.mu.Unlock()
			return inst, nil
		case p.starting != nil:
			wait := p.starting
			p.mu.Unlock()
			select {
			case <-wait:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
			p.mu.Lock()
			continue
		case p.now().Before(p.retryAt):
			err := fmt.Errorf("%w: %v (next start in %s)", ErrUnavailable, p.lastErr, p.retryAt.Sub(p.now()).Round(time.Second))
			p.mu.Unlock()
			return nil, err
		}
		done := make(chan struct{})
		p.starting = done
		p.starts++
		p.mu.Unlock()

		inst, desc, err := p.start()

		p.mu.Lock()
		p.starting = nil
		close(done)
		if err == nil && p.stopped {
			err = fmt.Errorf("%w: the node is stopping", ErrUnavailable)
		}
		if err != nil {
			p.backoffLocked(err, 0)
			p.mu.Unlock()
			if inst != nil {
				inst.kill()
			}
			return nil, err
		}
		p.cur, p.desc, p.lastErr = inst, &desc, nil
		p.mu.Unlock()
		go p.watch(inst)
		return inst, nil
	}
}

// start spawns an instance and handshakes with it.
func (p *Process) start() (*instance, kit.Description, error) {
	inst, err := spawn(p)
	if err != nil {
		return nil, kit.Description{}, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), p.cfg.HandshakeTimeout, ErrTimeout)
	defer cancel()
	var d kit.Description
	rsp, err := inst.client.Call(ctx, kit.MethodDescribe, nil)
	if err == nil {
		err = rsp.UnmarshalResult(&d)
	}
	if err != nil {
		if inst.client.IsStopped() {
			if c := inst.stopCause(); c != nil {
				err = c
			}
		} else if ctx.Err() != nil {
			err = fmt.Errorf("no answer to describe within %s", p.cfg.HandshakeTimeout)
		}
		return inst, d, fmt.Errorf("%w: %s", ErrHandshake, p.red.redact(oneLine(err.Error(), 300)))
	}
	if err := p.onDesc(d); err != nil {
		return inst, d, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	p.log.Info("adapter started", "path", p.Path, "version", oneLine(d.Version, 64), "pid", inst.pid())
	return inst, d, nil
}

// watch waits for inst to end (exit, or a dead channel) and records it.
func (p *Process) watch(inst *instance) {
	<-inst.ended
	cause := inst.stopCause()
	if cause == nil {
		cause = errors.New("the adapter exited")
	}
	p.fail(inst, cause)
}

// fail retires inst (if it is still the current one) with cause, sets the
// backoff and kills it.
func (p *Process) fail(inst *instance, cause error) {
	p.mu.Lock()
	if p.cur == inst {
		p.cur = nil
		if !p.stopped {
			p.backoffLocked(cause, p.now().Sub(inst.started))
			p.log.Warn("adapter failed; it restarts on a later call", "err", cause,
				"retry_in", p.retryAt.Sub(p.now()).Round(time.Millisecond), "failures", p.failures)
		}
	}
	p.mu.Unlock()
	inst.kill()
}

// backoffLocked counts a failure after an instance lived for lived and
// sets the time of the next start. p.mu must be held.
func (p *Process) backoffLocked(cause error, lived time.Duration) {
	if lived >= stableAfter {
		p.failures = 0
	}
	p.failures++
	d := p.cfg.RestartMin
	for i := 1; i < p.failures && d < p.cfg.RestartMax; i++ {
		d *= 2
	}
	p.retryAt = p.now().Add(min(d, p.cfg.RestartMax))
	p.lastErr = cause
}

// Stop ends the process for good: stdin is closed (the adapter's cue to
// exit), and it is killed if it has not exited within grace or ctx.
func (p *Process) Stop(ctx context.Context, grace time.Duration) {
	p.mu.Lock()
	p.stopped = true
	inst := p.cur
	p.cur = nil
	p.mu.Unlock()
	if inst != nil {
		inst.stop(ctx, grace)
	}
}
