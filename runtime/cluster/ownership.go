package cluster

import "strings"

// Ownership answers, for the runtime, which once-per-cluster work this
// node does now. A *Node implements it; Solo is the single node's.
type Ownership interface {
	// OwnsPoll reports whether this node polls the sentinels of a poll key
	// (PollKey of their subject).
	OwnsPoll(key string) bool
	// OwnsJob reports whether this node runs a periodic job now.
	OwnsJob(job string) bool
	// Writable is nil while this node can store writes, else the reason.
	Writable() error
}

// Solo is a single node's ownership: it owns everything and is writable.
type Solo struct{}

func (Solo) OwnsPoll(string) bool { return true }
func (Solo) OwnsJob(string) bool  { return true }
func (Solo) Writable() error      { return nil }

// PollKey is the key poll ownership hashes: the repository of a GitHub
// subject ("github:owner/repo", for its PRs and the repository itself, so
// sentinels on one repository share one owner and its fetches), else the
// subject itself.
func PollKey(subject string) string {
	if strings.HasPrefix(subject, "github:") {
		if i := strings.IndexByte(subject, '#'); i > 0 {
			return strings.ToLower(subject[:i])
		}
		return strings.ToLower(subject)
	}
	return subject
}
