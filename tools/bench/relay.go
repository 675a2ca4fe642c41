package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// The HTTP relay's wire: a signed POST /relay/<sender> whose delivery id
// names the event (as X-GitHub-Delivery does).
const (
	relaySignatureHeader = "X-Relay-Signature"
	relayDeliveryHeader  = "X-Relay-Delivery"
	relayMaxBody         = 1 << 20
)

// relayPath is the second baseline: the HTTP-to-JetStream relay a
// competent engineer would hand-roll in an afternoon, on the node's own
// JetStream server (same fsync) with the same senders. A net/http handler
// on loopback reads the body, checks its HMAC-SHA256, publishes it with
// PubAck to RELAYBENCH_IN (the delivery id as the message id) and answers
// 200; a pull consumer per sender (the delivery workers' discipline)
// builds the same inbox message as the node, publishes it to
// RELAYBENCH_OUT with a message id and acks. Timing stops when the inbox
// message is seen, as for the node.
type relayPath struct {
	*chain
	http   *http.Client
	secret []byte
	url    string
	srv    *http.Server
}

func newRelayPath(ctx context.Context, n *node, c int) (*relayPath, error) {
	js, err := n.js()
	if err != nil {
		return nil, err
	}
	return newRelayOn(ctx, js, n.app.NATSConn(), n.http, c, 1)
}

// newRelayOn builds the relay over any JetStream (the cluster phase's, with
// its streams at the cluster's replicas).
func newRelayOn(ctx context.Context, js jetstream.JetStream, nc *bus.Conn, hc *http.Client, c, replicas int) (*relayPath, error) {
	ch, err := newChain(ctx, js, nc, "RELAYBENCH", c, replicas, "sen_relay", "relay")
	if err != nil {
		return nil, err
	}
	r := &relayPath{chain: ch, http: hc, secret: make([]byte, 32)}
	if _, err := rand.Read(r.secret); err != nil {
		r.close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /relay/{sender}", r.receive)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	r.url = "http://" + ln.Addr().String() + "/relay/"
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// receive is the relay's handler: body, signature, publish with PubAck.
func (r *relayPath) receive(w http.ResponseWriter, req *http.Request) {
	sender := req.PathValue("sender")
	if _, err := strconv.Atoi(sender); err != nil {
		http.Error(w, "unknown sender", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, relayMaxBody))
	if err != nil {
		status := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status = http.StatusRequestEntityTooLarge
		}
		http.Error(w, "body: "+err.Error(), status)
		return
	}
	if !r.verify(body, req.Header.Get(relaySignatureHeader)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	id := req.Header.Get(relayDeliveryHeader)
	if id == "" {
		http.Error(w, "missing "+relayDeliveryHeader, http.StatusBadRequest)
		return
	}
	if _, err := r.js.Publish(req.Context(), "relaybench.in."+sender, body, jetstream.WithMsgID(id)); err != nil {
		http.Error(w, "publish: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (r *relayPath) sign(body []byte) string {
	mac := hmac.New(sha256.New, r.secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

func (r *relayPath) verify(body []byte, sig string) bool {
	got, err := hex.DecodeString(strings.TrimPrefix(sig, "sha256="))
	if err != nil || !strings.HasPrefix(sig, "sha256=") {
		return false
	}
	mac := hmac.New(sha256.New, r.secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// send posts one signed event for sender w and waits for its inbox
// message.
func (r *relayPath) send(ctx context.Context, w int, id string) error {
	body, err := json.Marshal(benchEvent(id, "github:bench/relay#"+strconv.Itoa(w+1)))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url+strconv.Itoa(w), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(relaySignatureHeader, r.sign(body))
	req.Header.Set(relayDeliveryHeader, id)
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST relay: %d %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return wait(ctx, r.landed[w], "relayed message")
}

func (r *relayPath) close() {
	if r.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := r.srv.Shutdown(ctx); err != nil {
			_ = r.srv.Close()
		}
		cancel()
	}
	r.chain.close()
}
