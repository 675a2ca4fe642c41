package agentpush

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

// FuzzParseInbound checks push parsing on arbitrary bodies and headers: it
// never panics; a correctly signed body is accepted exactly when it is a
// valid envelope, and then yields one event that passes validation; an
// arbitrary signature header is never accepted for a body it did not sign.
// Seeds live in testdata/fuzz/FuzzParseInbound.
func FuzzParseInbound(f *testing.F) {
	f.Add([]byte(`{"specversion":"1.0","id":"e","source":"s","type":"t.a.b","subject":"x:y","time":"","summary":"","data":{},"subjects":["x:y"],"terminal":false}`), int64(0), "")
	f.Add([]byte(`{}`), int64(-400), "v2=00")
	p := New(Config{Now: func() time.Time { return testNow }})
	h := pushHandle("v2")
	f.Fuzz(func(t *testing.T, body []byte, skew int64, sig string) {
		ts := testNow.Add(time.Duration(skew%1000) * time.Second)
		hdr := agentpushtest.SignedHeader(testSecret, ts, body)
		evs, err := p.ParseInbound(context.Background(), providers.Inbound{Body: body, Header: hdr}, h)
		stale := skew%1000 > 300 || skew%1000 < -300
		_, envErr := sentinel.ParseEnvelope(body, nil)
		switch {
		case stale && err == nil:
			t.Fatalf("stale timestamp (%d s) accepted", skew%1000)
		case !stale && envErr == nil && err != nil:
			t.Fatalf("valid signed envelope refused: %v", err)
		case !stale && envErr != nil && err == nil:
			t.Fatalf("invalid envelope accepted: %v", envErr)
		}
		if err == nil {
			if len(evs) != 1 {
				t.Fatalf("got %d events, want 1", len(evs))
			}
			if verr := evs[0].Validate(); verr != nil {
				t.Fatalf("accepted event fails validation: %v", verr)
			}
		} else if !isInboundError(err) {
			t.Fatalf("unexpected error type %T: %v", err, err)
		}

		// An attacker-chosen signature header must not verify.
		forged := http.Header{HeaderTimestamp: {strconv.FormatInt(testNow.Unix(), 10)}, HeaderSignature: {sig}}
		if sig == agentpushtest.SignV2(testSecret, testNow, body) {
			return
		}
		if _, err := p.ParseInbound(context.Background(), providers.Inbound{Body: body, Header: forged}, h); err == nil {
			t.Fatalf("forged signature %q accepted", sig)
		}
	})
}

// FuzzParseItem checks poll item parsing: every item becomes either an
// event that validates or a malformed record with a digest, never both.
func FuzzParseItem(f *testing.F) {
	f.Add([]byte(`{"delivery_id":"d","seq":3,"status":"pending","envelope":{"specversion":"1.0","id":"e","source":"s","type":"t","subject":"x:y","time":"","summary":"","data":{},"subjects":[],"terminal":true}}`))
	f.Add([]byte(`{"seq":"3"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // items are elements of a decoded JSON array
		}
		ev, seq, bad := parseItem(raw)
		if bad != nil {
			if bad.Digest == "" || bad.Bytes != len(raw) || bad.Error == "" {
				t.Fatalf("incomplete malformed record %+v", bad)
			}
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("parsed event fails validation: %v", err)
		}
		if seq != nil && ev.Seq == nil {
			t.Fatalf("item seq %d lost", *seq)
		}
	})
}

func isInboundError(err error) bool {
	var ie *providers.InboundError
	return errors.As(err, &ie)
}
