package adapter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// Handle state keys the node owns (the adapter's own state is under
// stateAdapter, untouched).
const (
	stateAdapter  = "adapter"
	stateSubjects = "subjects"
	stateHookKey  = "hookKey"
)

// readinessTimeout bounds a readiness call (listings ask every adapter).
const readinessTimeout = 5 * time.Second

// Deps are what an adapter provider is given.
type Deps struct {
	Log *slog.Logger
	// Creds holds the adapter's setup fields (the node's store).
	Creds providers.CredentialSource
	// PublicURL is the node's public origin, for push adapters.
	PublicURL providers.PublicURLFunc
	Now       func() time.Time
	// Environ is the node's environment (os.Environ when nil); the
	// adapter gets the filtered part of it (env.go).
	Environ []string
}

// Provider is a providers.Provider over one adapter executable.
type Provider struct {
	proc  *Process
	creds providers.CredentialSource
	pub   providers.PublicURLFunc
	log   *slog.Logger
	red   *redactor
	now   func() time.Time
	hsTO  time.Duration
}

// New returns the provider of the discovered adapter f. Nothing is started
// until its first use.
func New(f Found, cfg Config, d Deps) *Provider {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Environ == nil {
		d.Environ = os.Environ()
	}
	if d.PublicURL == nil {
		d.PublicURL = func() providers.PublicURL { return providers.PublicURL{} }
	}
	red := &redactor{}
	log := d.Log.With("provider", f.Slug)
	return &Provider{
		proc:  newProcess(f, cfg, log, d.Environ, red, d.Now, checkDescription(f.Slug)),
		creds: d.Creds, pub: d.PublicURL, log: log, red: red, now: d.Now, hsTO: cfg.HandshakeTimeout,
	}
}

// Process returns the provider's process (its state, Stop).
func (p *Provider) Process() *Process { return p.proc }

// Path is the adapter's executable.
func (p *Provider) Path() string { return p.proc.Path }

// describe returns the description, starting the adapter if it has none
// (bounded by the handshake timeout).
func (p *Provider) describe() (kit.Description, error) {
	ctx, cancel := context.WithTimeout(context.Background(), p.hsTO+time.Second)
	defer cancel()
	d, err := p.proc.Describe(ctx)
	if err != nil {
		return d, err
	}
	return cleanDescription(d), nil
}

// cached returns the last description without starting anything.
func (p *Provider) cached() (kit.Description, bool) {
	st := p.proc.State()
	if st.Described == nil {
		return kit.Description{}, false
	}
	return cleanDescription(*st.Described), true
}

// Info implements providers.Provider from the last description (the slug
// alone before the first handshake); it never starts the adapter.
func (p *Provider) Info() providers.Info {
	d, ok := p.cached()
	if !ok {
		return providers.Info{Slug: p.proc.Slug, Name: p.proc.Slug}
	}
	return providers.Info{Slug: p.proc.Slug, Name: d.Name, Version: d.Version, Description: d.Description, RequiresSetup: d.RequiresSetup}
}

// Capabilities implements providers.Provider. It is the adapter's first
// use when nothing else started it (the poll loop asks it); an adapter that
// cannot be described declares nothing (it is neither polled nor pushed).
func (p *Provider) Capabilities() providers.Capabilities {
	if d, ok := p.cached(); ok {
		return d.Capabilities
	}
	d, err := p.describe()
	if err != nil {
		return providers.Capabilities{}
	}
	return d.Capabilities
}

// DefaultTypes implements providers.Provider from the description's rules
// (the first whose glob matches the subject); never a call.
func (p *Provider) DefaultTypes(subject string) []string {
	d, ok := p.cached()
	if !ok {
		var err error
		if d, err = p.describe(); err != nil {
			return []string{}
		}
	}
	for _, r := range d.DefaultTypes {
		if sentinel.GlobMatch(r.Match, subject) {
			return append([]string{}, r.Types...)
		}
	}
	return []string{}
}

// SetupFields implements providers.SetupFielder.
func (p *Provider) SetupFields() []providers.SetupField {
	d, ok := p.cached()
	if !ok {
		var err error
		if d, err = p.describe(); err != nil {
			return nil
		}
	}
	return d.SetupFields
}

// Unavailable implements providers.AvailabilityChecker: why the adapter
// cannot be used now ("" when it can), starting it if it never was.
func (p *Provider) Unavailable(ctx context.Context) string {
	if _, err := p.describe(); err != nil {
		return p.red.redact(oneLine(err.Error(), 500))
	}
	return ""
}

// LastError is why the adapter's last instance ended or its last start
// failed, redacted ("" while healthy); it never starts the adapter.
func (p *Provider) LastError() string {
	if err := p.proc.State().LastError; err != nil {
		return p.red.redact(oneLine(err.Error(), 500))
	}
	return ""
}

// Readiness implements providers.ReadinessChecker: not ready while the
// adapter is unavailable (the reason says why), else its own answer.
func (p *Provider) Readiness(ctx context.Context) providers.Readiness {
	if _, err := p.describe(); err != nil {
		return providers.Readiness{Reason: "the adapter is unavailable: " + p.red.redact(oneLine(err.Error(), 400))}
	}
	ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
	defer cancel()
	creds, err := p.credentials(ctx)
	if err != nil {
		return providers.Readiness{Reason: err.Error()}
	}
	var r providers.Readiness
	if err := p.call(ctx, kit.MethodReadiness, kit.ReadinessParams{Credentials: creds}, &r); err != nil {
		return providers.Readiness{Reason: err.Error()}
	}
	r.Reason = p.red.redact(oneLine(r.Reason, 500))
	r.CredentialSource = oneLine(r.CredentialSource, 64)
	return r
}

// CheckSetup implements providers.SetupChecker: the adapter's setup
// method judges the fields (merged over the stored ones) before the node
// stores them.
func (p *Provider) CheckSetup(ctx context.Context, fields map[string]string) error {
	p.red.learn(p.sensitiveValues(fields)...)
	return p.call(ctx, kit.MethodSetup, kit.SetupParams{Fields: fields}, &kit.SetupResult{})
}

// Create implements providers.Provider.
func (p *Provider) Create(ctx context.Context, req providers.CreateRequest) (sentinel.Handle, error) {
	creds, err := p.credentials(ctx)
	if err != nil {
		return sentinel.Handle{}, err
	}
	params := kit.CreateParams{SentinelID: req.SentinelID, Until: req.Spec.Until, Delivery: req.Delivery, Credentials: creds}
	for _, c := range req.Spec.Match {
		params.Match = append(params.Match, kit.Clause{Subject: c.Subject, Types: c.Types})
	}
	state := map[string]any{stateSubjects: req.Spec.ClauseSubjects()}
	if req.Delivery.Mode == providers.ModePush {
		key, cb, err := p.callback("")
		if err != nil {
			return sentinel.Handle{}, err
		}
		state[stateHookKey], params.CallbackURL = key, cb
	}
	var h kit.Handle
	if err := p.call(ctx, kit.MethodCreate, params, &h); err != nil {
		return sentinel.Handle{}, err
	}
	if err := checkHandle(h); err != nil {
		return sentinel.Handle{}, p.protocolError(kit.MethodCreate, err)
	}
	return p.nodeHandle(h, state), nil
}

// Attach implements providers.Provider.
func (p *Provider) Attach(ctx context.Context, h sentinel.Handle, d providers.Delivery) (sentinel.Handle, error) {
	creds, err := p.credentials(ctx)
	if err != nil {
		return h, err
	}
	params := kit.AttachParams{Handle: adapterHandle(h), Delivery: d, Credentials: creds}
	if key := h.StateString(stateHookKey); key != "" {
		if _, cb, err := p.callback(key); err == nil {
			params.CallbackURL = cb
		}
	}
	var out kit.Handle
	if err := p.call(ctx, kit.MethodAttach, params, &out); err != nil {
		return h, err
	}
	if err := checkHandle(out); err != nil {
		return h, p.protocolError(kit.MethodAttach, err)
	}
	return p.nodeHandle(out, h.State), nil
}

// Cancel implements providers.Provider.
func (p *Provider) Cancel(ctx context.Context, h sentinel.Handle) error {
	creds, err := p.credentials(ctx)
	if err != nil {
		return err
	}
	return p.call(ctx, kit.MethodCancel, kit.HandleParams{Handle: adapterHandle(h), Credentials: creds}, nil)
}

// Status implements providers.Provider.
func (p *Provider) Status(ctx context.Context, h sentinel.Handle) (providers.Health, error) {
	creds, err := p.credentials(ctx)
	if err != nil {
		return providers.Health{}, err
	}
	var out providers.Health
	if err := p.call(ctx, kit.MethodStatus, kit.HandleParams{Handle: adapterHandle(h), Credentials: creds}, &out); err != nil {
		return providers.Health{}, err
	}
	out.Detail = p.red.redact(oneLine(out.Detail, 500))
	if raw, err := json.Marshal(out.Extra); err != nil || len(raw) > maxExtraBytes || strings.Contains(p.red.redact(string(raw)), sentinel.Redacted) {
		out.Extra = nil
	}
	return out, nil
}

// pollAnswer is poll's result as it comes: events raw, each checked on
// its own (one bad event does not sink the batch).
type pollAnswer struct {
	Events    []json.RawMessage     `json:"events"`
	Cursor    string                `json:"cursor"`
	Failure   string                `json:"failure,omitempty"`
	Malformed []providers.Malformed `json:"malformed,omitempty"`
}

// Poll implements providers.Poller: every event checked (checkEvents), the
// cursor capped, the failure text one redacted line.
func (p *Provider) Poll(ctx context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	res := providers.PollResult{Cursor: h.Cursor}
	creds, err := p.credentials(ctx)
	if err != nil {
		return res, err
	}
	var ans pollAnswer
	if err := p.call(ctx, kit.MethodPoll, kit.PollParams{Handle: adapterHandle(h), Limit: limit, Credentials: creds}, &ans); err != nil {
		return res, err
	}
	if len(ans.Cursor) > kit.MaxCursorBytes {
		return res, p.protocolError(kit.MethodPoll, fmt.Errorf("%w: cursor of %d bytes (the cap is %d)", ErrProtocol, len(ans.Cursor), kit.MaxCursorBytes))
	}
	evs, bad, err := p.checker(h, limit).events(ans.Events)
	if err != nil {
		return res, p.protocolError(kit.MethodPoll, err)
	}
	if len(bad) > 0 {
		p.log.WarnContext(ctx, "adapter events failed validation; parked as malformed", "count", len(bad), "first", bad[0].Error)
	}
	res.Events = evs
	res.Malformed = append(cleanMalformed(ans.Malformed, p.red), bad...)
	res.Cursor = ans.Cursor
	res.Failure = p.red.redact(oneLine(ans.Failure, maxFailureRunes))
	return res, nil
}

// Ack implements providers.Poller. The protocol has no ack: the cursor
// the node stores is the adapter's acknowledgement.
func (p *Provider) Ack(context.Context, sentinel.Handle, string) error { return nil }

// inboundAnswer is parseInbound's result as it comes.
type inboundAnswer struct {
	Events []json.RawMessage `json:"events"`
}

// maxInboundEvents caps the events of one push request.
const maxInboundEvents = 100

// ParseInbound implements providers.InboundParser. An event that fails
// its check is dropped and logged (a push has no quarantine); a refusal
// the adapter answers with a status is an *providers.InboundError.
func (p *Provider) ParseInbound(ctx context.Context, in providers.Inbound, h sentinel.Handle) ([]sentinel.Event, error) {
	creds, err := p.credentials(ctx)
	if err != nil {
		return nil, err
	}
	now := in.Now
	if now.IsZero() {
		now = p.now()
	}
	params := kit.InboundParams{Handle: adapterHandle(h), Headers: map[string][]string(in.Header.Clone()), Body: in.Body, Now: now, Credentials: creds}
	var ans inboundAnswer
	if err := p.call(ctx, kit.MethodParseInbound, params, &ans); err != nil {
		var pe *providers.Error
		if errors.As(err, &pe) {
			if ke, ok := kit.FromRPC(pe.Err); ok && ke.Status >= 400 && ke.Status < 500 {
				code := ke.Code
				if code == "" {
					code = "refused"
				}
				return nil, &providers.InboundError{Status: ke.Status, Code: oneLine(code, 64), Reason: p.red.redact(oneLine(ke.Message, 300))}
			}
		}
		return nil, err
	}
	chk := p.checker(h, maxInboundEvents)
	chk.now = now
	evs, bad, err := chk.events(ans.Events)
	if err != nil {
		return nil, p.protocolError(kit.MethodParseInbound, err)
	}
	if len(bad) > 0 {
		p.log.WarnContext(ctx, "adapter push events failed validation; dropped", "count", len(bad), "first", bad[0].Error)
	}
	return evs, nil
}

// checker returns the event check for a sentinel's handle.
func (p *Provider) checker(h sentinel.Handle, limit int) eventCheck {
	d, _ := p.cached()
	return eventCheck{slug: p.proc.Slug, schemes: d.Capabilities.Subjects, clauses: stateStrings(h.State[stateSubjects]),
		now: p.now(), maxCount: limit}
}

// call runs one method and classifies its failure (classify).
func (p *Provider) call(ctx context.Context, method string, params, out any) error {
	err := p.proc.Call(ctx, method, params, out)
	if err == nil {
		return nil
	}
	return p.classify(method, err)
}

// classify turns a failed call into a *providers.Error: the adapter's own
// classified error keeps its reason and retry advice (message one
// redacted line); the node's failures (ErrUnavailable, ErrTimeout, ...)
// are retryable server errors or, for a protocol violation, invalid.
func (p *Provider) classify(method string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if ke, ok := kit.FromRPC(err); ok {
		return &providers.Error{Reason: reasonOf(ke.Reason), Retryable: ke.Retryable, RetryAfter: min(max(ke.RetryAfter, 0), time.Hour),
			Message: p.proc.Slug + ": " + p.red.redact(oneLine(ke.Message, 500)), Err: err}
	}
	msg := p.red.redact(oneLine(err.Error(), 500))
	if errors.Is(err, ErrProtocol) {
		return &providers.Error{Reason: providers.ReasonInvalid, Message: p.proc.Slug + " " + method + ": " + msg, Err: err}
	}
	return &providers.Error{Reason: providers.ReasonServer, Retryable: true, Message: p.proc.Slug + " " + method + ": " + msg, Err: err}
}

// protocolError is a protocol violation of method's answer.
func (p *Provider) protocolError(method string, err error) error {
	if !errors.Is(err, ErrProtocol) {
		err = fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	return &providers.Error{Reason: providers.ReasonInvalid, Message: p.proc.Slug + " " + method + ": " + oneLine(err.Error(), 500), Err: err}
}

// credentials reads the adapter's stored setup fields and teaches the
// redactor their sensitive values.
func (p *Provider) credentials(ctx context.Context) (kit.Credentials, error) {
	if p.creds == nil {
		return nil, nil
	}
	c, err := p.creds.Credentials(ctx, p.proc.Slug)
	if err != nil {
		return nil, &providers.Error{Reason: providers.ReasonServer, Retryable: true, Message: p.proc.Slug + ": reading its stored setup failed", Err: err}
	}
	if len(c) == 0 {
		return nil, nil
	}
	p.red.learn(p.sensitiveValues(c)...)
	return kit.Credentials(c), nil
}

// sensitiveValues returns the values of the sensitive fields of c (every
// value when the adapter was never described).
func (p *Provider) sensitiveValues(c map[string]string) []string {
	d, ok := p.cached()
	var out []string
	for name, v := range c {
		sensitive := !ok
		for _, f := range d.SetupFields {
			if f.Name == name && f.Sensitive {
				sensitive = true
			}
		}
		if sensitive {
			out = append(out, v)
		}
	}
	return out
}

// callback returns the hook key (a fresh one for "") and the URL a push
// upstream calls for it.
func (p *Provider) callback(key string) (string, string, error) {
	pub := p.pub()
	if pub.URL == "" {
		return "", "", providers.SetupError("%s pushes: the node needs a public URL (set AGENTPROTO_PUBLIC_URL)", p.proc.Slug)
	}
	if key == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return "", "", err
		}
		key = p.proc.Slug + "-" + hex.EncodeToString(b)
	}
	return key, strings.TrimRight(pub.URL, "/") + "/inbound/sentinel-" + key, nil
}

// nodeHandle wraps the adapter's handle in the node's: the node's state
// keys (subjects, hook key) beside the adapter's opaque state.
func (p *Provider) nodeHandle(h kit.Handle, node map[string]any) sentinel.Handle {
	state := map[string]any{}
	for _, k := range []string{stateSubjects, stateHookKey} {
		if v, ok := node[k]; ok {
			state[k] = v
		}
	}
	if h.State != nil {
		state[stateAdapter] = h.State
	}
	return sentinel.Handle{Provider: p.proc.Slug, RemoteID: h.RemoteID, Cursor: h.Cursor, State: state}
}

// adapterHandle is the adapter's part of a node handle.
func adapterHandle(h sentinel.Handle) kit.Handle {
	st, _ := h.State[stateAdapter].(map[string]any)
	return kit.Handle{RemoteID: h.RemoteID, Cursor: h.Cursor, State: st}
}

// stateStrings reads a []string stored in a handle's state (a []any once
// it went through JSON).
func stateStrings(v any) []string {
	switch s := v.(type) {
	case []string:
		return s
	case []any:
		out := make([]string, 0, len(s))
		for _, x := range s {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// reasonOf maps a wire reason onto the provider error classes: the kit's
// reasons are the classes' metric labels (providers.Reason.String).
func reasonOf(r string) providers.Reason {
	for c := providers.ReasonSetup; c <= providers.ReasonInvalid; c++ {
		if c.String() == r {
			return c
		}
	}
	return providers.ReasonUnknown
}

// Interface guards.
var (
	_ providers.Provider            = (*Provider)(nil)
	_ providers.Poller              = (*Provider)(nil)
	_ providers.InboundParser       = (*Provider)(nil)
	_ providers.ReadinessChecker    = (*Provider)(nil)
	_ providers.SetupFielder        = (*Provider)(nil)
	_ providers.SetupChecker        = (*Provider)(nil)
	_ providers.AvailabilityChecker = (*Provider)(nil)
)
