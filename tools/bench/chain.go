package bench

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// chain is the transport both baselines share, with none of the node's
// logic: streams <prefix>_IN and <prefix>_OUT (subjects <prefix>.in.> and
// <prefix>.out.>, lowercase), and one pull consumer per sender (fresh
// Fetch(1) at a time, as the node's partition workers pull) that builds the
// node's inbox message from each event, publishes it with its message id
// to the out stream, and acks. The bench sees each message land on its
// own subscription (landed[w]).
type chain struct {
	js    jetstream.JetStream
	pulls *pullers
	// unsub stops each sender's subscription to the out stream.
	unsub  []func()
	landed []chan struct{}
}

// newChain provisions the chain's streams with replicas replicas on the
// server js talks to and starts c consumers; nc sees the output land.
// sentinelID and provider fill the inbox messages it builds.
func newChain(ctx context.Context, js jetstream.JetStream, nc *bus.Conn, prefix string, c, replicas int, sentinelID, provider string) (*chain, error) {
	subject := func(kind string) string { return strings.ToLower(prefix) + "." + kind }
	mk := func(kind string) (jetstream.Stream, error) {
		return js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: prefix + "_" + strings.ToUpper(kind), Subjects: []string{subject(kind) + ".>"},
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute, Replicas: replicas})
	}
	in, err := mk("in")
	if err != nil {
		return nil, err
	}
	if _, err := mk("out"); err != nil {
		return nil, err
	}
	ch := &chain{js: js, pulls: newPullers(ctx)}
	for w := range c {
		ws := strconv.Itoa(w)
		landed := make(chan struct{}, 1)
		unsub, err := bus.Subscribe(nc, subject("out")+"."+ws+".>", func() {
			select {
			case landed <- struct{}{}:
			default:
			}
		})
		if err != nil {
			ch.close()
			return nil, err
		}
		ch.unsub = append(ch.unsub, unsub)
		ch.landed = append(ch.landed, landed)
		// One consumer per sender, as the node has one per partition.
		cons, err := in.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: strings.ToLower(prefix) + ws,
			FilterSubject: subject("in") + "." + ws, AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1})
		if err != nil {
			ch.close()
			return nil, err
		}
		out := subject("out") + "." + ws + "."
		ch.pulls.run(cons, func(ctx context.Context, m jetstream.Msg) { deliverOnce(ctx, js, out, sentinelID, provider, m) })
	}
	return ch, nil
}

// deliverOnce is a chain consumer's work on one event: the inbox message,
// published with its message id under out+<id>, then the ack.
func deliverOnce(ctx context.Context, js jetstream.JetStream, out, sentinelID, provider string, m jetstream.Msg) {
	var ev sentinel.Event
	if err := json.Unmarshal(m.Data(), &ev); err != nil {
		_ = m.Term()
		return
	}
	msg := inbox.SentinelMessage(sentinelID, provider, "bench", sentinel.UrgencyNextTurn, &ev, sentinel.FormatTime(time.Now()))
	raw, err := json.Marshal(msg)
	if err != nil {
		_ = m.Term()
		return
	}
	if _, err := js.Publish(ctx, out+msg.ID, raw, jetstream.WithMsgID(msg.ID)); err != nil {
		_ = m.Nak()
		return
	}
	_ = m.Ack()
}

func (ch *chain) close() {
	ch.pulls.stop()
	for _, unsub := range ch.unsub {
		unsub()
	}
}
