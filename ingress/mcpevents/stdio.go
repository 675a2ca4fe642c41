package mcpevents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// ServeStdio serves MCP over newline-delimited JSON-RPC on in/out: modern
// events/* requests go to d (concurrently: a stream does not block other
// requests), notifications/cancelled naming one of them ends it, and
// every other line goes to serve (mcp-go's stdio server) through a pipe.
// Output lines of both are written whole, one at a time; the answers to
// modern server/discover requests gain the extension. It returns when in
// closes (or ctx ends) and serve has returned.
func ServeStdio(ctx context.Context, d Dispatcher, serve func(ctx context.Context, in io.Reader, out io.Writer) error, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lw := &lineWriter{w: out}
	st := &stdioState{calls: map[string]context.CancelFunc{}, discover: map[string]bool{}}
	filter := &outFilter{lw: lw, st: st}
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- serve(ctx, pr, filter) }()

	var wg sync.WaitGroup
	rd := bufio.NewReader(in)
	var readErr error
	for {
		line, err := rd.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if !st.route(ctx, d, line, lw, &wg) {
				if _, werr := pw.Write(line); werr != nil {
					readErr = werr
					break
				}
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
	}
	st.cancelAll()
	wg.Wait()
	_ = pw.Close()
	serr := <-served
	if readErr != nil {
		return readErr
	}
	if serr != nil && !errors.Is(serr, io.EOF) && !errors.Is(serr, context.Canceled) && !errors.Is(serr, io.ErrClosedPipe) {
		return serr
	}
	return nil
}

// stdioState tracks the events calls in flight (by id) and the ids of
// modern server/discover and initialize requests whose answers gain the
// extension.
type stdioState struct {
	mu       sync.Mutex
	calls    map[string]context.CancelFunc
	discover map[string]bool
	// legacy is set once the client initialized with LegacyRevision: its
	// events/* requests (without a revision) are served.
	legacy bool
}

// route handles a line that is this layer's and reports whether it did.
func (st *stdioState) route(ctx context.Context, d Dispatcher, line []byte, lw *lineWriter, wg *sync.WaitGroup) bool {
	req, ok := parse(line)
	if !ok {
		return false
	}
	switch {
	case req.Method == methodCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return false
		}
		st.mu.Lock()
		c, mine := st.calls[idKey(p.RequestID)]
		st.mu.Unlock()
		if mine {
			c()
		}
		return mine
	case (req.Method == methodDiscover && Modern(req.Revision()) || req.Method == methodInitialize) && req.IsRequest():
		st.mu.Lock()
		st.discover[idKey(req.ID)] = true
		if req.Method == methodInitialize {
			st.legacy = initializeVersion(req.Params) == LegacyRevision
		}
		st.mu.Unlock()
		return false
	case IsEvents(req.Method) && req.IsRequest() && (Modern(req.Revision()) || req.Revision() == "" && st.isLegacy()):
		cctx, cancel := context.WithCancel(ctx)
		key := idKey(req.ID)
		st.mu.Lock()
		st.calls[key] = cancel
		st.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				st.mu.Lock()
				delete(st.calls, key)
				st.mu.Unlock()
				cancel()
			}()
			d.Dispatch(cctx, line, req, func(msg []byte) error {
				if cctx.Err() != nil {
					return cctx.Err()
				}
				return lw.writeLine(msg)
			})
		}()
		return true
	}
	return false
}

func (st *stdioState) isLegacy() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.legacy
}

func (st *stdioState) cancelAll() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, c := range st.calls {
		c()
	}
}

// takeDiscover reports (once) whether id is a modern server/discover's.
func (st *stdioState) takeDiscover(id json.RawMessage) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	k := idKey(id)
	if st.discover[k] {
		delete(st.discover, k)
		return true
	}
	return false
}

func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

// lineWriter writes whole lines, one at a time.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) writeLine(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(append(bytes.TrimSpace(msg), '\n'))
	return err
}

// outFilter splits mcp-go's output into lines, patches discover answers
// and writes them through the shared line writer.
type outFilter struct {
	lw  *lineWriter
	st  *stdioState
	buf []byte
}

func (f *outFilter) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for {
		i := bytes.IndexByte(f.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := f.buf[:i]
		f.buf = f.buf[i+1:]
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && f.st.takeDiscover(m.ID) {
			line = withExtension(line)
		}
		if err := f.lw.writeLine(line); err != nil {
			return 0, err
		}
	}
}
