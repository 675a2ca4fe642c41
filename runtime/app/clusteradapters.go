package app

import (
	"slices"
	"sort"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// adapterStates reports this node's adapters for its heartbeat and the
// cluster view, without starting or calling one.
func (a *App) adapterStates() []cluster.AdapterState {
	var out []cluster.AdapterState
	for _, ap := range a.adapterProviders() {
		st := ap.Process().State()
		s := cluster.AdapterState{Slug: ap.Info().Slug, Status: api.AdapterIdle}
		switch {
		case st.Running:
			s.Status = api.AdapterRunning
		case st.LastError != nil:
			s.Status, s.Reason = api.AdapterUnavailable, ap.LastError()
		}
		out = append(out, s)
	}
	return out
}

// clusterAdapters is the wire form of a member's adapters.
func clusterAdapters(in []cluster.AdapterState) []api.ClusterAdapter {
	out := make([]api.ClusterAdapter, 0, len(in))
	for _, s := range in {
		out = append(out, api.ClusterAdapter{Slug: s.Slug, Status: s.Status, Reason: s.Reason})
	}
	return out
}

// markMissingAdapters adds to every member, as unavailable, each adapter
// another live member has and it lacks: an adapter must be installed on
// every node (docs/adapters.md, "In a cluster").
func markMissingAdapters(members []api.ClusterMember) {
	all := map[string]bool{}
	for _, m := range members {
		if !m.Live {
			continue
		}
		for _, ad := range m.Adapters {
			all[ad.Slug] = true
		}
	}
	slugs := make([]string, 0, len(all))
	for s := range all {
		slugs = append(slugs, s)
	}
	sort.Strings(slugs)
	for i := range members {
		for _, s := range slugs {
			if !slices.ContainsFunc(members[i].Adapters, func(ad api.ClusterAdapter) bool { return ad.Slug == s }) {
				members[i].Adapters = append(members[i].Adapters, api.ClusterAdapter{Slug: s, Status: api.AdapterUnavailable, Reason: "not installed on this node"})
			}
		}
	}
}
