// Package fake is a scriptable in-memory (or file-fed) sentinel provider,
// poll and push capable, used by the runtime's tests and by end-to-end
// tests of the built binary. The binary offers it only behind an explicit
// test-only setting.
package fake

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Slug is the fake provider's default slug.
const Slug = "fake"

// SignatureHeader carries hex(HMAC-SHA256(secret, body)) on push requests.
const SignatureHeader = "X-Fake-Signature"

// Config configures the fake provider.
type Config struct {
	// Slug overrides the slug (default "fake").
	Slug string
	// FeedFile, when set, is a JSON-lines file of events read on every poll;
	// line i (1-based) has sequence i. Otherwise the in-memory feed is used.
	FeedFile string
	// Secret signs push deliveries (default "fake-secret").
	Secret string
	// NoPoll makes the provider push-only.
	NoPoll bool
	// DefaultTypes for clauses without types (default ["*"]).
	DefaultTypes []string
}

// Provider is the fake provider. Its exported methods script it.
type Provider struct {
	cfg Config

	mu         sync.Mutex
	feed       []sentinel.Event
	pollErr    error
	softFail   string
	createErr  error
	attachErr  error
	cancelErr  error
	notReady   string
	acks       []string
	cancels    []string
	creates    int
	attaches   int
	polls      int
	pollsByKey map[string]int
}

// New returns a fake provider.
func New(cfg Config) *Provider {
	if cfg.Slug == "" {
		cfg.Slug = Slug
	}
	if cfg.Secret == "" {
		cfg.Secret = "fake-secret"
	}
	if len(cfg.DefaultTypes) == 0 {
		cfg.DefaultTypes = []string{"*"}
	}
	return &Provider{cfg: cfg, pollsByKey: map[string]int{}}
}

// Emit appends events to the in-memory feed; each gets the next sequence.
func (p *Provider) Emit(evs ...sentinel.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.feed = append(p.feed, evs...)
}

// FailPoll makes every Poll return err (nil clears it).
func (p *Provider) FailPoll(err error) { p.mu.Lock(); p.pollErr = err; p.mu.Unlock() }

// FailSoft makes Poll report a failure it handled itself (PollResult.
// Failure) while still returning events and the cursor ("" clears it).
func (p *Provider) FailSoft(msg string) { p.mu.Lock(); p.softFail = msg; p.mu.Unlock() }

// FailCreate makes Create return err (nil clears it).
func (p *Provider) FailCreate(err error) { p.mu.Lock(); p.createErr = err; p.mu.Unlock() }

// FailAttach makes Attach return err (nil clears it).
func (p *Provider) FailAttach(err error) { p.mu.Lock(); p.attachErr = err; p.mu.Unlock() }

// FailCancel makes Cancel return err (nil clears it).
func (p *Provider) FailCancel(err error) { p.mu.Lock(); p.cancelErr = err; p.mu.Unlock() }

// SetNotReady makes Readiness report not ready with reason ("" = ready).
func (p *Provider) SetNotReady(reason string) { p.mu.Lock(); p.notReady = reason; p.mu.Unlock() }

// Acks returns the cursors acked so far.
func (p *Provider) Acks() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.acks...)
}

// Cancels returns the remote ids cancelled so far.
func (p *Provider) Cancels() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.cancels...)
}

// Counts returns how many creates, attaches and polls ran.
func (p *Provider) Counts() (creates, attaches, polls int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.creates, p.attaches, p.polls
}

// Info implements providers.Provider.
func (p *Provider) Info() providers.Info {
	return providers.Info{Slug: p.cfg.Slug, Name: "Fake", Version: "1.0.0", Description: "scriptable test provider"}
}

// Capabilities implements providers.Provider.
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{Subjects: []string{"*"}, Push: true, Poll: !p.cfg.NoPoll, TypicalLatencyMs: 10}
}

// DefaultTypes implements providers.Provider.
func (p *Provider) DefaultTypes(string) []string { return append([]string(nil), p.cfg.DefaultTypes...) }

// Create implements providers.Provider. The handle's state carries the
// hook key ("fk-" + sentinel id) and the watched subjects.
func (p *Provider) Create(_ context.Context, req providers.CreateRequest) (sentinel.Handle, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.creates++
	if p.createErr != nil {
		return sentinel.Handle{}, p.createErr
	}
	subjects := make([]any, 0, len(req.Spec.Match))
	for _, c := range req.Spec.Match {
		subjects = append(subjects, c.Subject)
	}
	return sentinel.Handle{
		Provider: p.cfg.Slug,
		RemoteID: "fake-" + req.SentinelID,
		Cursor:   "0",
		State:    map[string]any{"hookKey": "fk-" + strings.ToLower(req.SentinelID), "subjects": subjects},
	}, nil
}

// Attach implements providers.Provider.
func (p *Provider) Attach(_ context.Context, h sentinel.Handle, _ providers.Delivery) (sentinel.Handle, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attaches++
	if p.attachErr != nil {
		return h, p.attachErr
	}
	return h, nil
}

// Cancel implements providers.Provider.
func (p *Provider) Cancel(_ context.Context, h sentinel.Handle) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancels = append(p.cancels, h.RemoteID)
	return p.cancelErr
}

// Status implements providers.Provider.
func (p *Provider) Status(_ context.Context, h sentinel.Handle) (providers.Health, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pollErr != nil {
		return providers.Health{OK: false, Detail: p.pollErr.Error()}, nil
	}
	return providers.Health{OK: true, Extra: map[string]any{"polls": p.pollsByKey[h.RemoteID]}}, nil
}

// Readiness implements providers.ReadinessChecker.
func (p *Provider) Readiness(context.Context) providers.Readiness {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.notReady != "" {
		return providers.Readiness{Ready: false, Reason: p.notReady}
	}
	return providers.Readiness{Ready: true}
}

// Poll implements providers.Poller: events with sequence > cursor whose
// subjects match the handle's watched subjects, at most limit.
func (p *Provider) Poll(_ context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	after, _ := strconv.Atoi(h.Cursor)
	p.mu.Lock()
	p.polls++
	p.pollsByKey[h.RemoteID]++
	err, soft := p.pollErr, p.softFail
	// Nothing after the cursor in the in-memory feed: the quiet poll
	// answers without copying the feed or reading the handle's subjects.
	quiet := p.cfg.FeedFile == "" && after >= len(p.feed)
	p.mu.Unlock()
	if err != nil {
		return providers.PollResult{}, err
	}
	if quiet {
		return providers.PollResult{Cursor: h.Cursor, Failure: soft}, nil
	}
	feed, err := p.snapshot()
	if err != nil {
		return providers.PollResult{}, err
	}
	watched := watchedSubjects(h)
	res := providers.PollResult{Cursor: h.Cursor, Failure: soft}
	for i := after; i < len(feed) && len(res.Events) < limit; i++ {
		ev := feed[i]
		res.Cursor = strconv.Itoa(i + 1)
		if ev.ID == "" {
			res.Malformed = append(res.Malformed, providers.Malformed{Error: "unparseable feed line " + strconv.Itoa(i+1)})
			continue
		}
		for _, w := range watched {
			if sentinel.SubjectMatches(w, ev.AllSubjects()) {
				res.Events = append(res.Events, ev)
				break
			}
		}
	}
	return res, nil
}

// Ack implements providers.Poller.
func (p *Provider) Ack(_ context.Context, _ sentinel.Handle, cursor string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acks = append(p.acks, cursor)
	return nil
}

// Sign returns the signature header value for body.
func (p *Provider) Sign(body []byte) string {
	m := hmac.New(sha256.New, []byte(p.cfg.Secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// ParseInbound implements providers.InboundParser: the body is one event or
// a JSON array of events, signed with SignatureHeader.
func (p *Provider) ParseInbound(_ context.Context, in providers.Inbound, _ sentinel.Handle) ([]sentinel.Event, error) {
	sig := in.Header.Get(SignatureHeader)
	if sig == "" {
		return nil, providers.BadSignature("missing_signature")
	}
	if !hmac.Equal([]byte(sig), []byte(p.Sign(in.Body))) {
		return nil, providers.BadSignature("bad_signature")
	}
	body := bytes.TrimSpace(in.Body)
	var raws []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if err := json.Unmarshal(body, &raws); err != nil {
			return nil, providers.BadPayload("invalid_json")
		}
	} else {
		if !json.Valid(body) {
			return nil, providers.BadPayload("invalid_json")
		}
		raws = []json.RawMessage{body}
	}
	out := make([]sentinel.Event, 0, len(raws))
	for _, r := range raws {
		ev, err := sentinel.ParseEnvelope(r, nil)
		if err != nil {
			return nil, providers.BadPayload("invalid_envelope")
		}
		out = append(out, ev)
	}
	return out, nil
}

func (p *Provider) snapshot() ([]sentinel.Event, error) {
	if p.cfg.FeedFile == "" {
		p.mu.Lock()
		defer p.mu.Unlock()
		return append([]sentinel.Event(nil), p.feed...), nil
	}
	f, err := os.Open(p.cfg.FeedFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open feed: %w", err)
	}
	defer f.Close()
	var out []sentinel.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev, err := sentinel.ParseEnvelope(line, nil)
		if err != nil {
			ev = sentinel.Event{} // a malformed line: reported, not delivered
		}
		out = append(out, ev)
	}
	return out, sc.Err()
}

func watchedSubjects(h sentinel.Handle) []string {
	raw, _ := h.State["subjects"].([]any)
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		if s, ok := r.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Interface guards.
var (
	_ providers.Provider         = (*Provider)(nil)
	_ providers.Poller           = (*Provider)(nil)
	_ providers.InboundParser    = (*Provider)(nil)
	_ providers.ReadinessChecker = (*Provider)(nil)
)
