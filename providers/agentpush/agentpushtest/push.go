package agentpushtest

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Push headers, as the real service sends them.
const (
	HeaderTimestamp = "X-Agentpush-Timestamp"
	HeaderSignature = "X-Agentpush-Signature"
)

// SignV2 returns the signature header value "v2=<hex>" of body signed at ts
// with secret: HMAC-SHA256(secret, "<unix seconds>.<body>").
func SignV2(secret string, ts time.Time, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.", ts.Unix())
	m.Write(body)
	return "v2=" + hex.EncodeToString(m.Sum(nil))
}

// SignLegacy returns a pre-v2 signature value "sha256=<hex>": an HMAC of
// the body alone, with no timestamp.
func SignLegacy(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// SignedHeader returns the headers of a push of body signed at ts.
func SignedHeader(secret string, ts time.Time, body []byte) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, SignV2(secret, ts, body))
	return h
}

// PushResult reports one Deliver call.
type PushResult struct {
	// Delivered counts rows the callback accepted (2xx); they are removed
	// from the queue as if acked.
	Delivered int
	// Statuses are the HTTP statuses answered, in order.
	Statuses []int
}

// Deliver pushes the queued rows of push subscription id, oldest first, to
// its callback URL, each signed with signature v2 at Config.Now. A 2xx
// answer removes the row; the first other answer stops the round (the row
// stays queued, as the real service retries later) and is returned as an
// error with the statuses so far.
func (s *Server) Deliver(ctx context.Context, id string) (PushResult, error) {
	var res PushResult
	for {
		s.mu.Lock()
		sb, ok := s.subs[id]
		if !ok || sb.Mode != "push" {
			s.mu.Unlock()
			return res, fmt.Errorf("agentpushtest: %q is not a live push subscription", id)
		}
		if len(sb.rows) == 0 {
			s.mu.Unlock()
			return res, nil
		}
		rw, url, secret := sb.rows[0], sb.CallbackURL, sb.CallbackSecret
		s.mu.Unlock()
		status, err := s.post(ctx, url, secret, rw.envelope)
		if err != nil {
			return res, err
		}
		res.Statuses = append(res.Statuses, status)
		if status < 200 || status > 299 {
			return res, fmt.Errorf("agentpushtest: callback answered HTTP %d for seq %d", status, rw.seq)
		}
		res.Delivered++
		s.mu.Lock()
		if sb, ok := s.subs[id]; ok {
			sb.ackLocked(rw.seq)
		}
		s.mu.Unlock()
	}
}

// post sends one signed push.
func (s *Server) post(ctx context.Context, url, secret string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("agentpushtest: build push request: %w", err)
	}
	req.Header = SignedHeader(secret, s.cfg.Now(), body)
	resp, err := s.cfg.PushClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("agentpushtest: push to callback: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}
