package embedded

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// clientAuth authenticates the client connections of a clustered server.
// The listen token admits a client to the global account, exactly as
// Options.Authorization would; a second token, random per process and
// never written anywhere, admits this process's own in-process client to
// the system account, which JetStream peer removal needs
// ($JS.API.SERVER.REMOVE answers the system account only). Routes
// authenticate apart (cluster.go), so this sees clients only.
type clientAuth struct {
	token  string
	system string
	// ns is set after NewServer, before Start (no client is checked
	// earlier).
	ns *server.Server
}

// newClientAuth moves the listen token of opts into a clientAuth and
// installs it.
func newClientAuth(opts *server.Options, system string) *clientAuth {
	a := &clientAuth{token: opts.Authorization, system: system}
	opts.Authorization = ""
	opts.CustomClientAuthentication = a
	return a
}

// Check implements server.Authentication.
func (a *clientAuth) Check(c server.ClientAuthentication) bool {
	if c.Kind() != server.CLIENT {
		return false
	}
	o := c.GetOpts()
	if o == nil || o.Token == "" {
		return false
	}
	if equalSecret(o.Token, a.system) {
		sys := a.ns.SystemAccount()
		if sys == nil {
			return false
		}
		c.RegisterUser(&server.User{Username: "sentinel-system", Account: sys})
		return true
	}
	return equalSecret(o.Token, a.token)
}

func equalSecret(got, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// ErrNotClustered is returned for cluster operations on a single server.
var ErrNotClustered = errors.New("embedded: this server is not clustered")

// ErrPeerNotFound is returned by RemovePeer for a server name the
// JetStream meta group does not know.
var ErrPeerNotFound = errors.New("embedded: no JetStream peer has this server name")

// removeSubject is the JetStream API of peer removal (system account,
// answered by the meta leader once the removal is applied).
const removeSubject = "$JS.API.SERVER.REMOVE"

type removeRequest struct {
	Server string `json:"peer"`
	Peer   string `json:"peer_id,omitempty"`
}

type removeResponse struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error,omitempty"`
	Success bool `json:"success"`
}

// RemovePeer permanently removes the server named name from the JetStream
// meta group (its streams' replicas move to other peers where there are
// any). It asks the meta leader through a system-account connection of
// this process and returns once the leader has applied the removal, or
// when ctx ends. The removed server must stay stopped: started again
// within five minutes it is refused, later it rejoins as a new peer.
// Errors: ErrNotClustered, ErrPeerNotFound, or the leader's refusal.
func (s *Server) RemovePeer(ctx context.Context, name string) error {
	if !s.clustered || s.sysToken == "" {
		return ErrNotClustered
	}
	meta, ok := s.Meta()
	if !ok {
		return ErrNotClustered
	}
	id := ""
	for _, p := range meta.Peers {
		if p.Name == name {
			id = p.ID
		}
	}
	if id == "" {
		return fmt.Errorf("%w: %q", ErrPeerNotFound, name)
	}
	nc, err := nats.Connect("", nats.InProcessServer(s), nats.Name("sentinel system"), nats.Token(s.sysToken))
	if err != nil {
		return fmt.Errorf("embedded: system connection: %w", err)
	}
	defer nc.Close()
	raw, _ := json.Marshal(removeRequest{Server: name, Peer: id})
	msg, err := nc.RequestWithContext(ctx, removeSubject, raw)
	if err != nil {
		return fmt.Errorf("embedded: remove peer %s: no answer from the JetStream meta leader (is a majority of the cluster up?): %w", name, err)
	}
	var resp removeResponse
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return fmt.Errorf("embedded: remove peer %s: unreadable answer: %w", name, err)
	}
	if resp.Error != nil {
		if resp.Error.ErrCode == int(server.JSClusterServerNotMemberErr) {
			return fmt.Errorf("%w: %q", ErrPeerNotFound, name)
		}
		return fmt.Errorf("embedded: remove peer %s: the meta leader refused: %s (error %d)", name, resp.Error.Description, resp.Error.ErrCode)
	}
	if !resp.Success {
		return fmt.Errorf("embedded: remove peer %s: the meta leader did not confirm the removal", name)
	}
	return nil
}
