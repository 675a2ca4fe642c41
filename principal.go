package sentinel

import "strings"

// Scope is what a principal (the authenticated caller of a surface) may
// do.
type Scope string

// Scopes of a principal.
const (
	// ScopeAdmin may do everything: the node's own token (daemon-token,
	// AGENTPROTO_TOKEN) and named tokens created with this scope.
	ScopeAdmin Scope = "admin"
	// ScopeAgent acts for its sessions: watches, follows, inboxes and
	// session reports of the sessions its prefix covers, nothing of the
	// operator's (tokens, provider setup, replays, cluster changes,
	// session hooks).
	ScopeAgent Scope = "agent"
	// ScopeRead reads (of the sessions its prefix covers, when it has one)
	// and changes nothing.
	ScopeRead Scope = "read"
)

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool { return s == ScopeAdmin || s == ScopeAgent || s == ScopeRead }

// AllSessions, as a principal's session prefix, covers every session.
const AllSessions = "*"

// Principal is the authenticated caller of a request: who it is (ID, the
// owner of its MCP Events subscriptions and cursors; Name, what the
// messages it posts are labelled with) and what it may do. The zero
// Principal may do nothing.
type Principal struct {
	ID    string `json:"-"`
	Name  string `json:"name"`
	Scope Scope  `json:"scope"`
	// Sessions is the session id prefix the principal acts for (agent,
	// read); "" or AllSessions covers every session.
	Sessions string `json:"sessions,omitempty"`
}

// OperatorID is the principal id of the node's own token: the id MCP
// Events subscriptions made with it have always been bound to.
const OperatorID = "api-token"

// OperatorName is the name of the node's own token's principal.
const OperatorName = "operator"

// Operator is the principal of the node's own API token.
func Operator() Principal { return Principal{ID: OperatorID, Name: OperatorName, Scope: ScopeAdmin} }

// Admin reports whether the principal may do everything.
func (p Principal) Admin() bool { return p.Scope == ScopeAdmin }

// Writes reports whether the principal may change anything.
func (p Principal) Writes() bool { return p.Scope == ScopeAdmin || p.Scope == ScopeAgent }

// Covers reports whether the principal acts for session id.
func (p Principal) Covers(id string) bool {
	switch {
	case p.Admin():
		return true
	case p.Scope != ScopeAgent && p.Scope != ScopeRead:
		return false
	case p.Sessions == "" || p.Sessions == AllSessions:
		return true
	}
	return strings.HasPrefix(id, p.Sessions)
}

// CoversAll reports whether the principal acts for every session.
func (p Principal) CoversAll() bool {
	return p.Admin() || ((p.Scope == ScopeAgent || p.Scope == ScopeRead) && (p.Sessions == "" || p.Sessions == AllSessions))
}

// Refuse is the forbidden_scope error of the principal for what.
func (p Principal) Refuse(what string) error {
	return Errorf(CodeForbiddenScope, "the token %q (scope %s) may not %s", p.Name, p.Scope, what)
}

// NeedAdmin is nil for an admin principal, else forbidden_scope for what.
func (p Principal) NeedAdmin(what string) error {
	if p.Admin() {
		return nil
	}
	return p.Refuse(what)
}

// NeedWrite is nil for a principal that may change things, else
// forbidden_scope for what.
func (p Principal) NeedWrite(what string) error {
	if p.Writes() {
		return nil
	}
	return p.Refuse(what)
}
