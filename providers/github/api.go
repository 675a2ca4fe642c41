package github

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// AcceptJSON is the media type every REST call asks for.
const AcceptJSON = "application/vnd.github+json"

// APIVersion is the REST API version every call asks for
// (X-GitHub-Api-Version): GitHub's version dated 2026-03-10 is the first
// with breaking changes, and a call without the header gets GitHub's
// default, which may move to it.
const APIVersion = "2022-11-28"

// APIVersionHeader is the request header naming the REST API version.
const APIVersionHeader = "X-GitHub-Api-Version"

// API makes one REST call through gh: `gh api -i -X <method> -H 'Accept:
// application/vnd.github+json' -H 'X-GitHub-Api-Version: 2022-11-28'
// <path> [--input -]`. path is relative to the
// REST root (e.g. "repos/o/r/hooks"); gh adds the host (GH_HOST) and the
// enterprise prefix itself. body, when non-nil, goes to gh on stdin and
// never in argv, so a hook secret inside it stays out of the process
// table.
//
// The status line and headers printed by -i are parsed even when gh exits
// 1 (it does on every status >= 400 and on 304). err is nil for 2xx and
// 304; for a status >= 400 it is a *providers.Error classified by
// providers.ClassifyHTTP carrying GitHub's message, with status, header and
// body still returned (a 404 on a deleted hook is status 404). When gh got
// no HTTP response (gh missing, not authenticated, network failure) status
// is 0 and err says why.
func (r *Runner) API(ctx context.Context, method, path string, body []byte) (status int, header http.Header, respBody []byte, err error) {
	return r.APIWithHeader(ctx, method, path, nil, body)
}

// APIWithHeader is API with extra request headers (for example
// If-None-Match). Header values must not carry secrets: they are argv. A
// path with a "." or ".." segment is refused without running gh
// (CheckRESTPath).
func (r *Runner) APIWithHeader(ctx context.Context, method, path string, extra http.Header, body []byte) (status int, header http.Header, respBody []byte, err error) {
	if method == "" {
		method = http.MethodGet
	}
	if err := CheckRESTPath(path); err != nil {
		return 0, nil, nil, err
	}
	args := []string{"api", "-i", "-X", method, "-H", "Accept: " + AcceptJSON, "-H", APIVersionHeader + ": " + APIVersion}
	for k, vs := range extra {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	args = append(args, strings.TrimPrefix(path, "/"))
	if body != nil {
		args = append(args, "--input", "-")
	}
	stdout, _, runErr := r.Run(ctx, body, args...)
	resp, perr := ParseAPIOutput(stdout)
	if perr != nil {
		if runErr != nil {
			return 0, nil, nil, classifyRunError(runErr)
		}
		return 0, nil, nil, fmt.Errorf("gh api %s %s: %w", method, path, perr)
	}
	if resp.Status >= 400 {
		e := providers.ClassifyHTTP(resp.Status, resp.Header, time.Now())
		e.Message = fmt.Sprintf("gh api %s %s: HTTP %d", method, path, resp.Status)
		if m := apiMessage(resp.Body); m != "" {
			e.Message += ": " + RedactToken(m, "")
		}
		if runErr != nil {
			e.Err = runErr
		}
		return resp.Status, resp.Header, resp.Body, e
	}
	return resp.Status, resp.Header, resp.Body, nil
}

// ghExitAuth is gh's exit code for "authentication required".
const ghExitAuth = 4

// classifyRunError turns a gh failure without an HTTP response into a
// classified error: a missing gh stays a setup error; gh's
// authentication-required exit (4: "gh auth login" interactively, "set the
// GH_TOKEN environment variable" when gh thinks it runs in CI) or "no oauth
// token" is an auth error naming the fix; anything else (connection
// failures) is a retryable network error.
func classifyRunError(err error) error {
	var pe *providers.Error
	if errors.As(err, &pe) {
		return err
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		low := strings.ToLower(ee.Stderr)
		if ee.Code == ghExitAuth || strings.Contains(low, "auth login") || strings.Contains(low, "no oauth token") ||
			strings.Contains(low, "authentication") || strings.Contains(low, "gh_token") {
			return &providers.Error{Reason: providers.ReasonAuth, Message: ee.Error() + ": " + LoginHint, Err: err}
		}
		return &providers.Error{Reason: providers.ReasonNetwork, Retryable: true, Message: ee.Error(), Err: err}
	}
	return err
}

// APIResponse is a parsed `gh api -i` output.
type APIResponse struct {
	Proto  string
	Status int
	Header http.Header
	Body   []byte
}

// ErrNoStatusLine is returned by ParseAPIOutput when the output does not
// start with an HTTP status line.
var ErrNoStatusLine = errors.New("gh api output has no HTTP status line")

// ParseAPIOutput parses what `gh api -i` prints: a status line ("HTTP/1.1
// 200 OK"), header lines in Go's canonical form, a blank line, then the
// body. Line ends may be LF or CRLF (gh 2.23 ends the status line with LF
// and headers with CRLF). The output is untrusted: it is bounded by the
// runner and parsed without panicking.
func ParseAPIOutput(out []byte) (APIResponse, error) {
	br := bufio.NewReader(bytes.NewReader(out))
	line, err := br.ReadString('\n')
	if err != nil && line == "" {
		return APIResponse{}, ErrNoStatusLine
	}
	line = strings.TrimRight(line, "\r\n")
	proto, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/") {
		return APIResponse{}, ErrNoStatusLine
	}
	code, _, _ := strings.Cut(rest, " ")
	status, err := strconv.Atoi(code)
	if err != nil || status < 100 || status > 999 {
		return APIResponse{}, fmt.Errorf("gh api output has a bad status line %q", truncate(line, 80))
	}
	hdr, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return APIResponse{}, fmt.Errorf("gh api output has bad headers: %w", err)
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(br); err != nil {
		return APIResponse{}, fmt.Errorf("gh api output: %w", err)
	}
	return APIResponse{Proto: proto, Status: status, Header: http.Header(hdr), Body: body.Bytes()}, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
