package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// LeaderReadTimeout bounds a leader read whose context has no deadline
// (an election takes 4 to 9 s; the read is retried by its caller).
const LeaderReadTimeout = 5 * time.Second

// ErrNoMessage is returned by LeaderLast when the subject holds no message
// (or, in a KV bucket, its last entry is a delete or purge marker).
var ErrNoMessage = errors.New("bus: no message on subject")

// LeaderLast reads the last message on subject through the stream leader
// (the stream API, not a direct get: with AllowDirect a lagging replica may
// answer a direct get, so a write another node just made could be missed).
// It returns the data and the stream sequence (a KV entry's revision).
//
// A context without a deadline gets LeaderReadTimeout: a leader that was
// SIGKILLed answers nothing (and no "no responders" comes back) until the
// next election, so an unbounded read would wait for ever.
func (b *Bus) LeaderLast(ctx context.Context, stream, subject string) ([]byte, uint64, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, LeaderReadTimeout)
		defer cancel()
	}
	req, _ := json.Marshal(map[string]string{"last_by_subj": subject})
	msg, err := b.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
	if err != nil {
		return nil, 0, fmt.Errorf("bus: leader get %s: %w", subject, err)
	}
	var resp struct {
		Error *struct {
			Code      int    `json:"code"`
			ErrorCode int    `json:"err_code"`
			Desc      string `json:"description"`
		} `json:"error"`
		Message *struct {
			Sequence uint64 `json:"seq"`
			Header   []byte `json:"hdrs"`
			Data     []byte `json:"data"`
		} `json:"message"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, 0, fmt.Errorf("bus: leader get %s: %w", subject, err)
	}
	if resp.Error != nil {
		if resp.Error.Code == 404 {
			return nil, 0, ErrNoMessage
		}
		return nil, 0, fmt.Errorf("bus: leader get %s: %s (%d)", subject, resp.Error.Desc, resp.Error.ErrorCode)
	}
	if resp.Message == nil {
		return nil, 0, fmt.Errorf("bus: leader get %s: empty answer", subject)
	}
	if len(resp.Message.Header) > 0 {
		if hdr, err := nats.DecodeHeadersMsg(resp.Message.Header); err == nil {
			if op := hdr.Get("KV-Operation"); op == "DEL" || op == "PURGE" {
				return nil, resp.Message.Sequence, ErrNoMessage
			}
		}
	}
	return resp.Message.Data, resp.Message.Sequence, nil
}

// KVSubject is the subject of key in a KV bucket's stream.
func KVSubject(bucket, key string) string { return "$KV." + bucket + "." + key }

// KVStream is the stream name of a KV bucket.
func KVStream(bucket string) string { return "KV_" + bucket }
