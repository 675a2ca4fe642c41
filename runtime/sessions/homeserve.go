package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// jobFetchWait bounds one pull of the job consumer; an idle worker pulls
// again after it.
const jobFetchWait = 30 * time.Second

// jobRetry is how long a job that could not run (the registry could not
// be read, a hand-over failed) waits before it is tried again.
const jobRetry = 5 * time.Second

// maxResumeWait caps the time a resume request may ask for.
const maxResumeWait = 10 * time.Minute

// Start provisions this node's job consumer, answers resume requests for
// the sessions living here and starts the job workers. It is a no-op when
// already started.
func (h *Homes) Start(ctx context.Context) error {
	if !h.started.CompareAndSwap(false, true) {
		return nil
	}
	h.sem = make(chan struct{}, h.resumes)
	h.ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	fetchCtx, stopFetch := context.WithCancel(h.ctx)
	h.stopFetch = stopFetch
	// The composition root provisions the stream at bus.Open; ensuring it
	// here too (a read when it is as wanted) lets Homes run on any bus.
	if _, err := h.bus.EnsureStream(ctx, HookJobsStream()); err != nil {
		h.cancel()
		return err
	}
	cons, err := hookConsumer(ctx, h.bus, h.node)
	if err != nil {
		h.cancel()
		return err
	}
	if h.unserve, err = h.bus.Serve(ResumeSubject(h.node), h.serveResume); err != nil {
		h.cancel()
		return fmt.Errorf("sessions: answer resume requests: %w", err)
	}
	for i := 0; i < h.workers; i++ {
		h.wg.Add(1)
		go h.work(fetchCtx, cons)
	}
	return nil
}

// Stop stops answering and pulling, cancels the hooks running (their jobs
// are not acked, so they run again at the next start) and waits.
// Idempotent and nil-safe.
func (h *Homes) Stop() {
	if h == nil || !h.started.Load() {
		return
	}
	h.mu.Lock()
	if h.stopping {
		h.mu.Unlock()
		return
	}
	h.stopping = true
	h.mu.Unlock()
	if h.unserve != nil {
		_ = h.unserve()
	}
	h.stopFetch()
	h.cancel()
	h.wg.Wait()
}

// work pulls one job at a time until Stop.
func (h *Homes) work(ctx context.Context, cons jetstream.Consumer) {
	defer h.wg.Done()
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, jobFetchWait)
		batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return
			}
			h.log.Warn("hook job fetch failed", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		for msg := range batch.Messages() {
			h.handleJob(msg)
		}
		cancel()
	}
}

// handleJob runs one job and acks it; a job cut short by Stop is left for
// the next start, one that could not run is retried.
func (h *Homes) handleJob(msg jetstream.Msg) {
	var job hookJob
	if err := json.Unmarshal(msg.Data(), &job); err != nil || job.Kind != jobNotify || !sentinel.ValidSessionID(job.Message.To) {
		h.log.Warn("dropping an unreadable hook job", "subject", msg.Subject())
		_ = msg.Term()
		return
	}
	stop := keepInProgress(h.ctx, msg)
	err := h.notifier.dispatch(h.ctx, job.Message, job.Hops)
	stop()
	switch {
	case h.ctx.Err() != nil:
		_ = msg.Nak()
	case err != nil:
		h.log.Warn("hook job not run; will retry", "session", job.Message.To, "message", job.Message.ID, "err", err)
		_ = msg.NakWithDelay(jobRetry)
	default:
		if err := msg.Ack(); err != nil {
			h.log.Warn("hook job ack failed; it may run again", "session", job.Message.To, "err", err)
		}
	}
}

// keepInProgress reports progress on msg every third of the ack wait
// until the returned function is called (a hook may outlast the ack wait).
func keepInProgress(ctx context.Context, msg jetstream.Msg) func() {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(HookJobAckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// serveResume answers one resume request on its own goroutine (the
// subscription's callbacks run one at a time), at most Resumes at once.
func (h *Homes) serveResume(data []byte, reply func([]byte)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping {
		return
	}
	select {
	case h.sem <- struct{}{}:
	default:
		respond(reply, resumeReply{Error: fmt.Sprintf("node %s is running %d resume hooks already", h.node, h.resumes)})
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer func() { <-h.sem }()
		respond(reply, h.answerResume(data))
	}()
}

// answerResume runs the resume of a session living here, inside the time
// the asking node waits less a margin for the answer to travel back.
func (h *Homes) answerResume(data []byte) resumeReply {
	var req resumeRequest
	if err := json.Unmarshal(data, &req); err != nil || !sentinel.ValidSessionID(req.SessionID) {
		return resumeReply{Error: "unreadable resume request"}
	}
	wait := min(time.Duration(req.TimeoutMs)*time.Millisecond, maxResumeWait)
	if wait <= 0 {
		return resumeReply{Error: "the resume request has no time left"}
	}
	margin := min(wait/10, time.Second)
	ctx, cancel := context.WithTimeoutCause(h.ctx, wait-margin,
		fmt.Errorf("resume stopped: node %s waits %s for the answer (delivery.handle_timeout)", req.From, wait))
	defer cancel()
	res, err := h.resolver.resumeOn(ctx, req.SessionID, true)
	if err != nil {
		if !errors.Is(err, errHomeMoved) {
			h.log.Warn("resume asked by another node failed", "session", req.SessionID, "from", req.From, "err", err)
		}
		return resumeReply{Error: err.Error()}
	}
	return resumeReply{Action: actionNames[res.Action], To: res.To, Reason: res.Reason}
}

func respond(reply func([]byte), rep resumeReply) {
	raw, err := json.Marshal(rep)
	if err == nil {
		reply(raw)
	}
}
