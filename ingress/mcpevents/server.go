package mcpevents

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
)

// Service is the events/* service behind the layer (runtime/subscriptions
// in a node). params are the raw JSON-RPC params; results are encoded as
// they are; errors are mapped by ToRPC.
type Service interface {
	List(ctx context.Context, params json.RawMessage) (any, error)
	Poll(ctx context.Context, principal string, params json.RawMessage) (any, error)
	// Stream serves one push stream until ctx ends, sending notifications
	// through notify (the layer adds the subscription id to their _meta).
	Stream(ctx context.Context, principal string, params json.RawMessage, notify func(method string, params any) error) error
	Subscribe(ctx context.Context, principal string, params json.RawMessage) (any, error)
	Unsubscribe(ctx context.Context, principal string, params json.RawMessage) (any, error)
}

// Server dispatches to an in-process Service. NewServer builds it.
type Server struct {
	svc Service
	// life, when set, ends every stream when it ends.
	life    context.Context
	log     *slog.Logger
	streams StreamSlots
}

// ServerOption sets one of a server's optional settings.
type ServerOption func(*Server)

// WithLife ends every stream when life ends (the node stopping): the
// stream then gets its final frame.
func WithLife(life context.Context) ServerOption { return func(s *Server) { s.life = life } }

// WithLogger logs failed requests to l (default: discard).
func WithLogger(l *slog.Logger) ServerOption { return func(s *Server) { s.log = l } }

// WithStreams caps open events/stream calls with the node's other
// long-held requests (keyed by principal); over a cap the call answers
// ResourceExhausted (limit "streams").
func WithStreams(slots StreamSlots) ServerOption { return func(s *Server) { s.streams = slots } }

// NewServer returns the server dispatching to svc with opts applied.
func NewServer(svc Service, opts ...ServerOption) *Server {
	s := &Server{svc: svc}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// StreamSlots caps long-held requests (the node's shared limiter):
// Acquire takes a slot of key and returns its release, or an error whose
// code is too_many_streams.
type StreamSlots interface {
	Acquire(key string) (release func(), err error)
}

// StreamKey is the limiter key of a principal's event streams.
func StreamKey(principal string) string { return "events:" + principal }

// Dispatch implements Dispatcher.
func (s *Server) Dispatch(ctx context.Context, _ []byte, req *Request, emit func([]byte) error) {
	principal := PrincipalFrom(ctx)
	var (
		result any
		err    error
	)
	switch req.Method {
	case MethodList:
		result, err = s.svc.List(ctx, req.Params)
	case MethodPoll:
		result, err = s.svc.Poll(ctx, principal, req.Params)
	case MethodSubscribe:
		result, err = s.svc.Subscribe(ctx, principal, req.Params)
	case MethodUnsubscribe:
		result, err = s.svc.Unsubscribe(ctx, principal, req.Params)
	case MethodStream:
		s.stream(ctx, principal, req, emit)
		return
	default:
		_ = emit(errorResponse(req.ID, &RPCError{Code: CodeMethodNotFound, Message: "Method not found",
			Data: map[string]any{"reason": "no method " + req.Method + " in " + ExtensionID}}))
		return
	}
	if err != nil {
		_ = emit(errorResponse(req.ID, s.rpcError(req.Method, err)))
		return
	}
	_ = emit(response(req.ID, result))
}

func (s *Server) rpcError(method string, err error) *RPCError {
	e, known := ToRPC(err)
	if !known {
		s.log.Warn("mcp events request failed", "method", method, "err", err)
	}
	return e
}

// stream runs one events/stream: notifications as they come, then the
// final StreamEventsResult when the server ends the stream (never when
// the client cancelled it).
func (s *Server) stream(ctx context.Context, principal string, req *Request, emit func([]byte) error) {
	if s.streams != nil {
		release, err := s.streams.Acquire(StreamKey(principal))
		if err != nil {
			_ = emit(errorResponse(req.ID, s.rpcError(req.Method, err)))
			return
		}
		defer release()
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.life != nil {
		stop := context.AfterFunc(s.life, cancel)
		defer stop()
	}
	sent := false
	var writeErr error
	err := s.svc.Stream(sctx, principal, req.Params, func(method string, params any) error {
		msg, err := notification(method, params, req.ID)
		if err != nil {
			return err
		}
		if err := emit(msg); err != nil {
			writeErr = err
			cancel()
			return err
		}
		sent = true
		return nil
	})
	switch {
	case ctx.Err() != nil || writeErr != nil:
		return // the client went away: no final frame
	case err != nil && !sent && !errors.Is(err, context.Canceled):
		_ = emit(errorResponse(req.ID, s.rpcError(req.Method, err)))
		return
	case err != nil && !errors.Is(err, context.Canceled):
		s.log.Warn("mcp events stream ended", "err", err)
	}
	_ = emit(response(req.ID, map[string]any{"resultType": "complete", "_meta": map[string]json.RawMessage{MetaSubscriptionID: req.ID}}))
}
