package kit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/handler"

	"github.com/agentproto/sentinel"
)

// Adapter is an adapter written with this package: its description and a
// function per method. Describe and Create are required; every other
// function may be nil:
//
//   - Readiness nil: always ready.
//   - Setup nil: the fields are accepted as they are.
//   - Attach nil: the handle is kept as it is.
//   - Cancel nil: nothing to cancel.
//   - Status nil: healthy.
//   - Poll nil: the adapter does not poll (capabilities.poll must be false).
//   - ParseInbound nil: the adapter takes no pushes.
//
// Each function is called concurrently for different handles; ctx ends
// when the node gives up on the call (its timeout) or the node stops.
type Adapter struct {
	Describe     Description
	Readiness    func(ctx context.Context, p ReadinessParams) (Readiness, error)
	Setup        func(ctx context.Context, p SetupParams) (SetupResult, error)
	Create       func(ctx context.Context, p CreateParams) (Handle, error)
	Attach       func(ctx context.Context, p AttachParams) (Handle, error)
	Cancel       func(ctx context.Context, p HandleParams) error
	Status       func(ctx context.Context, p HandleParams) (Health, error)
	Poll         func(ctx context.Context, p PollParams) (PollResult, error)
	ParseInbound func(ctx context.Context, p InboundParams) (InboundResult, error)

	protocol   *int
	describeFn func(ctx context.Context) (Description, error)
}

// Options tune Serve.
type Options struct {
	// MaxMessageBytes caps a line either way (DefaultMaxMessageBytes).
	MaxMessageBytes int
	// Concurrency bounds the calls handled at once (default 8).
	Concurrency int
}

// Serve answers the node's calls read from r with answers written to w
// until r ends (the node closed stdin: it is stopping) or ctx ends. It
// returns nil on an orderly end.
func Serve(ctx context.Context, a Adapter, r io.Reader, w io.WriteCloser, o Options) error {
	if err := a.check(); err != nil {
		return err
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	srv := jrpc2.NewServer(a.methods(), &jrpc2.ServerOptions{
		Concurrency:    o.Concurrency,
		DisableBuiltin: true,
		NewContext:     func() context.Context { return ctx },
	})
	srv.Start(NewChannel(r, w, o.MaxMessageBytes, 0))
	stop := context.AfterFunc(ctx, srv.Stop)
	defer stop()
	err := srv.Wait()
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// Main serves a on stdin/stdout until the node closes stdin or sends
// SIGTERM, and returns the process exit code. Write diagnostics to stderr:
// the node logs it (redacted); stdout belongs to the protocol.
func Main(a Adapter) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Serve(ctx, a, os.Stdin, os.Stdout, Options{}); err != nil {
		fmt.Fprintf(os.Stderr, "sentinel-adapter-%s: %v\n", a.Describe.Slug, err)
		return 1
	}
	return 0
}

func (a Adapter) check() error {
	switch {
	case a.Describe.Slug == "":
		return errors.New("kit: Describe.Slug is empty")
	case a.Create == nil:
		return errors.New("kit: Create is required")
	case a.Describe.Capabilities.Poll && a.Poll == nil:
		return errors.New("kit: capabilities.poll is set but Poll is nil")
	case a.Describe.Capabilities.Push && a.ParseInbound == nil:
		return errors.New("kit: capabilities.push is set but ParseInbound is nil")
	}
	return nil
}

// methods builds the method table: each entry decodes its params, calls
// the adapter's function and turns its error into the wire shape.
func (a Adapter) methods() handler.Map {
	desc := a.Describe
	desc.ProtocolVersion = ProtocolVersion
	if a.protocol != nil {
		desc.ProtocolVersion = *a.protocol
	}
	describe := func(context.Context) (Description, error) { return desc, nil }
	if a.describeFn != nil {
		describe = a.describeFn
	}
	m := handler.Map{
		MethodDescribe: handler.New(describe),
		MethodReadiness: method(func(ctx context.Context, p ReadinessParams) (Readiness, error) {
			if a.Readiness == nil {
				return Readiness{Ready: true}, nil
			}
			return a.Readiness(ctx, p)
		}),
		MethodSetup: method(func(ctx context.Context, p SetupParams) (SetupResult, error) {
			if a.Setup == nil {
				return SetupResult{Readiness: Readiness{Ready: true}}, nil
			}
			return a.Setup(ctx, p)
		}),
		MethodCreate: method(a.Create),
		MethodAttach: method(func(ctx context.Context, p AttachParams) (Handle, error) {
			if a.Attach == nil {
				return p.Handle, nil
			}
			return a.Attach(ctx, p)
		}),
		MethodCancel: method(func(ctx context.Context, p HandleParams) (struct{}, error) {
			if a.Cancel == nil {
				return struct{}{}, nil
			}
			return struct{}{}, a.Cancel(ctx, p)
		}),
		MethodStatus: method(func(ctx context.Context, p HandleParams) (Health, error) {
			if a.Status == nil {
				return Health{OK: true}, nil
			}
			return a.Status(ctx, p)
		}),
		MethodCancelRequest: handler.New(func(ctx context.Context, p CancelRequestParams) error {
			if s := jrpc2.ServerFromContext(ctx); s != nil && len(p.ID) > 0 {
				s.CancelRequest(string(p.ID))
			}
			return nil
		}),
	}
	if a.Poll != nil {
		m[MethodPoll] = method(func(ctx context.Context, p PollParams) (PollResult, error) {
			res, err := a.Poll(ctx, p)
			if res.Events == nil {
				res.Events = []sentinel.Event{}
			}
			return res, err
		})
	}
	if a.ParseInbound != nil {
		m[MethodParseInbound] = method(func(ctx context.Context, p InboundParams) (InboundResult, error) {
			res, err := a.ParseInbound(ctx, p)
			if res.Events == nil {
				res.Events = []sentinel.Event{}
			}
			return res, err
		})
	}
	return m
}

// method wraps fn as a handler whose errors go out classified (toRPC).
func method[P, R any](fn func(context.Context, P) (R, error)) jrpc2.Handler {
	return func(ctx context.Context, req *jrpc2.Request) (any, error) {
		var p P
		if req.HasParams() {
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, &jrpc2.Error{Code: jrpc2.InvalidParams, Message: "invalid params: " + err.Error()}
			}
		}
		res, err := fn(ctx, p)
		if err != nil {
			return nil, toRPC(err)
		}
		return res, nil
	}
}

// WithProtocol returns a with describe answering protocol version v
// instead of ProtocolVersion (to test a node's refusal).
func (a Adapter) WithProtocol(v int) Adapter {
	a.protocol = &v
	return a
}

// WithDescribe returns a with describe answered by fn (to test a node's
// handshake bound).
func (a Adapter) WithDescribe(fn func(ctx context.Context) (Description, error)) Adapter {
	a.describeFn = fn
	return a
}
