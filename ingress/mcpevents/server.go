package mcpevents

import (
	"context"
	"encoding/json"
	"errors"
	"io"
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

// Server dispatches to an in-process Service.
type Server struct {
	Svc Service
	// Life, when set, ends every stream when it ends (the node stopping):
	// the stream then gets its final frame.
	Life context.Context
	Log  *slog.Logger
	// Streams, when set, caps open events/stream calls with the node's
	// other long-held requests (keyed by principal); over a cap the call
	// answers ResourceExhausted (limit "streams").
	Streams StreamSlots
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
		result, err = s.Svc.List(ctx, req.Params)
	case MethodPoll:
		result, err = s.Svc.Poll(ctx, principal, req.Params)
	case MethodSubscribe:
		result, err = s.Svc.Subscribe(ctx, principal, req.Params)
	case MethodUnsubscribe:
		result, err = s.Svc.Unsubscribe(ctx, principal, req.Params)
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
		s.log().Warn("mcp events request failed", "method", method, "err", err)
	}
	return e
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return s.Log
}

// stream runs one events/stream: notifications as they come, then the
// final StreamEventsResult when the server ends the stream (never when
// the client cancelled it).
func (s *Server) stream(ctx context.Context, principal string, req *Request, emit func([]byte) error) {
	if s.Streams != nil {
		release, err := s.Streams.Acquire(StreamKey(principal))
		if err != nil {
			_ = emit(errorResponse(req.ID, s.rpcError(req.Method, err)))
			return
		}
		defer release()
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.Life != nil {
		stop := context.AfterFunc(s.Life, cancel)
		defer stop()
	}
	sent := false
	var writeErr error
	err := s.Svc.Stream(sctx, principal, req.Params, func(method string, params any) error {
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
		s.log().Warn("mcp events stream ended", "err", err)
	}
	_ = emit(response(req.ID, map[string]any{"resultType": "complete", "_meta": map[string]json.RawMessage{MetaSubscriptionID: req.ID}}))
}
