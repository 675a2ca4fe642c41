package adaptertest

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// Modes of the feed adapter (<SLUG>_MODE).
const (
	ModeNormal       = ""
	ModePush         = "push"          // push only: parseInbound, no poll
	ModeHangPoll     = "hang-poll"     // poll never answers
	ModeHangDescribe = "hang-describe" // describe never answers
	ModeGarbage      = "garbage"       // every answer is not JSON
	ModeHuge         = "huge"          // poll answers a line over any cap
	ModeFlood        = "flood"         // writes lines nobody asked for
	ModeCrashPoll    = "crash-poll"    // exits in the middle of a poll
	ModeWrongSlug    = "wrong-slug"    // describe names another slug
	ModeOldProtocol  = "old-protocol"  // describe answers protocol 0
	ModeBadEvents    = "bad-events"    // poll answers invalid and foreign events beside good ones
	ModeStderrFlood  = "stderr-flood"  // floods stderr while answering normally
	ModeNoStart      = "no-start"      // exits at once
)

// Line is one line of a feed file.
type Line struct {
	Subject  string `json:"subject"`
	Type     string `json:"type"`
	ID       string `json:"id"`
	Summary  string `json:"summary"`
	Terminal bool   `json:"terminal,omitempty"`
}

// SignatureHeader carries a push's HMAC-SHA256 (hex) of the body under the
// token.
const SignatureHeader = "X-Feed-Signature"

// Sign returns the signature header value of body under token.
func Sign(token string, body []byte) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Main runs the feed adapter as the executable it was started as and
// returns the exit code.
func Main() int {
	slug := strings.TrimPrefix(filepath.Base(os.Args[0]), "sentinel-adapter-")
	prefix := strings.ToUpper(strings.ReplaceAll(slug, "-", "_")) + "_"
	mode := os.Getenv(prefix + "MODE")
	f := &feed{slug: slug, path: os.Getenv(prefix + "FEED"), mode: mode}
	switch mode {
	case ModeNoStart:
		fmt.Fprintln(os.Stderr, "refusing to start")
		return 3
	case ModeGarbage:
		return garbage()
	case ModeFlood:
		go flood()
	case ModeStderrFlood:
		go func() {
			for i := 0; ; i++ {
				fmt.Fprintf(os.Stderr, "noise %d\n", i)
			}
		}()
	}
	return kit.Main(f.adapter())
}

// feed is the adapter's state (none between calls: the cursor is in the
// handle).
type feed struct {
	slug, path, mode string
}

func (f *feed) adapter() kit.Adapter {
	d := kit.Description{
		Slug: f.slug, Name: "Feed (" + f.slug + ")", Version: "1.0.0",
		Description:   "test adapter: events from a file",
		Capabilities:  providers.Capabilities{Subjects: []string{"feed"}, Poll: f.mode != ModePush, Push: f.mode == ModePush, TypicalLatencyMs: 1000, RequiresAuth: true},
		DefaultTypes:  []kit.DefaultTypesRule{{Match: "feed:*", Types: []string{"feed.*"}}},
		SetupFields:   []providers.SetupField{{Name: "token", Description: "the feed's token", Required: true, Sensitive: true}, {Name: "baseUrl", Description: "where the feed lives", Endpoint: true}},
		RequiresSetup: true,
	}
	switch f.mode {
	case ModeWrongSlug:
		d.Slug = "someone-else"
	case ModeOldProtocol:
		return kit.Adapter{Describe: d, Create: f.create, Poll: f.poll}.WithProtocol(0)
	case ModeHangDescribe:
		return kit.Adapter{Describe: d, Create: f.create, Poll: f.poll}.WithDescribe(func(ctx context.Context) (kit.Description, error) {
			<-ctx.Done()
			return d, ctx.Err()
		})
	}
	a := kit.Adapter{Describe: d, Create: f.create, Readiness: f.readiness, Setup: f.setup, Status: f.status}
	if f.mode == ModePush {
		a.ParseInbound = f.parseInbound
	} else {
		a.Poll = f.poll
	}
	return a
}

func (f *feed) readiness(_ context.Context, p kit.ReadinessParams) (kit.Readiness, error) {
	if p.Credentials["token"] == "" {
		return kit.Readiness{Reason: "run `sentinel setup " + f.slug + " --field token`"}, nil
	}
	return kit.Readiness{Ready: true, CredentialSource: "setup"}, nil
}

func (f *feed) setup(_ context.Context, p kit.SetupParams) (kit.SetupResult, error) {
	if p.Fields["token"] == "reject-me" {
		return kit.SetupResult{}, kit.Errorf(kit.ReasonSetup, "that token is refused: use another")
	}
	return kit.SetupResult{Readiness: kit.Readiness{Ready: true}}, nil
}

func (f *feed) create(_ context.Context, p kit.CreateParams) (kit.Handle, error) {
	for _, c := range p.Match {
		if sentinel.SchemeOf(c.Subject) != "feed" {
			return kit.Handle{}, kit.Errorf(kit.ReasonInvalid, "%s watches feed: subjects only", f.slug)
		}
	}
	n, err := f.count()
	if err != nil {
		return kit.Handle{}, err
	}
	return kit.Handle{RemoteID: "feed-" + p.SentinelID, Cursor: strconv.Itoa(n), State: map[string]any{"callback": p.CallbackURL}}, nil
}

// status reports the names of the variables the adapter was started with
// (names only: tests check the node passed nothing else).
func (f *feed) status(context.Context, kit.HandleParams) (kit.Health, error) {
	var names []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	sort.Strings(names)
	return kit.Health{OK: true, Detail: "env " + strings.Join(names, ",")}, nil
}

func (f *feed) poll(ctx context.Context, p kit.PollParams) (kit.PollResult, error) {
	tok := p.Credentials["token"]
	if tok == "" {
		return kit.PollResult{}, kit.Errorf(kit.ReasonAuth, "no token: run `sentinel setup %s --field token`", f.slug)
	}
	fmt.Fprintf(os.Stderr, "polling with token %s\n", tok)
	switch f.mode {
	case ModeHangPoll:
		<-ctx.Done()
		return kit.PollResult{}, ctx.Err()
	case ModeCrashPoll:
		os.Exit(7)
	case ModeHuge:
		_, _ = os.Stdout.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"events":[],"cursor":"` + strings.Repeat("x", 8<<20) + "\"}}\n")
		<-ctx.Done()
		return kit.PollResult{}, ctx.Err()
	}
	lines, err := f.read()
	if err != nil {
		return kit.PollResult{}, err
	}
	after, _ := strconv.Atoi(p.Handle.Cursor)
	after = min(max(after, 0), len(lines))
	end := min(len(lines), after+max(p.Limit, 1))
	res := kit.PollResult{Cursor: strconv.Itoa(end), Events: []sentinel.Event{}}
	for _, l := range lines[after:end] {
		res.Events = append(res.Events, event(l))
	}
	if f.mode == ModeBadEvents && len(res.Events) > 0 {
		bad := event(Line{Subject: "feed:x", Type: "feed.bad type", ID: "bad-1"})
		foreign := event(Line{Subject: "github:o/r#1", Type: "github.pull_request.closed", ID: "foreign-1", Terminal: true})
		res.Events = append(res.Events, bad, foreign)
	}
	return res, nil
}

func (f *feed) parseInbound(_ context.Context, p kit.InboundParams) (kit.InboundResult, error) {
	tok := p.Credentials["token"]
	sig := ""
	for k, v := range p.Headers {
		if strings.EqualFold(k, SignatureHeader) && len(v) > 0 {
			sig = v[0]
		}
	}
	if tok == "" || !hmac.Equal([]byte(sig), []byte(Sign(tok, p.Body))) {
		return kit.InboundResult{}, kit.InboundRefused(401, "bad_signature", "the signature does not match")
	}
	var lines []Line
	if err := json.Unmarshal(p.Body, &lines); err != nil {
		return kit.InboundResult{}, kit.InboundRefused(400, "invalid_json", "the body is not a JSON array of lines")
	}
	res := kit.InboundResult{Events: []sentinel.Event{}}
	for _, l := range lines {
		res.Events = append(res.Events, event(l))
	}
	return res, nil
}

// event is the envelope of a feed line.
func event(l Line) sentinel.Event {
	return sentinel.NewEvent(l.ID, "feed", l.Type, l.Subject, []string{l.Subject}, time.Unix(1700000000, 0), l.Summary, l.Terminal,
		map[string]any{"line": l.ID})
}

func (f *feed) count() (int, error) {
	lines, err := f.read()
	return len(lines), err
}

func (f *feed) read() ([]Line, error) {
	if f.path == "" {
		return nil, nil
	}
	fh, err := os.Open(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, kit.Errorf(kit.ReasonServer, "read the feed: %v", err)
	}
	defer fh.Close()
	var out []Line
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var l Line
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.ID != "" {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

// garbage answers every line with text that is not JSON-RPC.
func garbage() int {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Println("hello, I am not JSON")
	}
	return 0
}

// flood writes unsolicited lines as fast as it can.
func flood() {
	line := []byte(`{"jsonrpc":"2.0","method":"spam","params":{}}` + "\n")
	for {
		if _, err := os.Stdout.Write(line); err != nil {
			return
		}
	}
}

func jsonLine(l Line) ([]byte, error) {
	raw, err := json.Marshal(l)
	return append(raw, '\n'), err
}
