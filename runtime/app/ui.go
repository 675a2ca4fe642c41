package app

import (
	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/ui"
)

// wireUI builds the web dashboard (/ui) over the node's services and
// returns its mount. Its event streams end when the node starts stopping
// (a subsystem Drain), before the HTTP server drains.
func (a *App) wireUI(sapi api.Sentinels) (ingress.Mounter, error) {
	svc := ui.Services{Sentinels: sapi, Explainer: a.explainerAPI(), Cluster: scopedCluster{clusterAPI{a}}}
	for _, s := range a.subsystems {
		if w := s.sessions; w != nil {
			svc.Sessions, svc.Inboxes, svc.Follows = scopedSessions{sessionsAPI{reg: w.registry}}, scopedInboxes{inboxesAPI{svc: w.inboxes}},
				scopedFollows{followsAPI{engine: w.engine}}
		}
	}
	h, err := ui.New(ui.Config{Token: a.Token, Services: svc, Log: a.Log.With("component", "ui")})
	if err != nil {
		return nil, err
	}
	a.subsystems = append(a.subsystems, subsystem{Drain: h.Close})
	return h.Mount, nil
}
