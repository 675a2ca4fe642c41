package github

import (
	"sort"
	"time"
)

// RedeliveryHorizon is how far back GitHub accepts redelivery requests.
const RedeliveryHorizon = 72 * time.Hour

// HookDelivery is one entry of a hook's delivery log (GET
// /repos/{o}/{r}/hooks/{id}/deliveries, GET /app/hook/deliveries).
type HookDelivery struct {
	ID          int64  `json:"id"`
	GUID        string `json:"guid"`
	DeliveredAt string `json:"delivered_at"`
	Redelivery  bool   `json:"redelivery"`
	Status      string `json:"status"`
	StatusCode  int    `json:"status_code"`
	Event       string `json:"event"`
}

// OK reports a delivery the endpoint accepted.
func (d HookDelivery) OK() bool {
	return d.StatusCode >= 200 && d.StatusCode < 300 && (d.Status == "" || d.Status == "OK")
}

// FailedDeliveries returns, per guid with no successful delivery, its
// latest failed delivery: in redeliver when it is within
// RedeliveryHorizon of now, in expired when older (GitHub would refuse
// it). Pings and entries without a guid, an id or a time are skipped. Both
// are ordered oldest first.
func FailedDeliveries(list []HookDelivery, now time.Time) (redeliver, expired []HookDelivery) {
	type guidState struct {
		ok     bool
		latest HookDelivery
		at     time.Time
	}
	byGUID := map[string]*guidState{}
	for _, d := range list {
		if d.GUID == "" || d.ID <= 0 || d.Event == WebhookPing {
			continue
		}
		at, err := time.Parse(time.RFC3339, d.DeliveredAt)
		if err != nil {
			continue
		}
		g := byGUID[d.GUID]
		if g == nil {
			g = &guidState{}
			byGUID[d.GUID] = g
		}
		if d.OK() {
			g.ok = true
			continue
		}
		if g.latest.ID == 0 || at.After(g.at) || (at.Equal(g.at) && d.ID > g.latest.ID) {
			g.latest, g.at = d, at
		}
	}
	for _, g := range byGUID {
		switch {
		case g.ok || g.latest.ID == 0:
		case now.Sub(g.at) >= RedeliveryHorizon:
			expired = append(expired, g.latest)
		default:
			redeliver = append(redeliver, g.latest)
		}
	}
	sort.Slice(redeliver, func(i, j int) bool { return redeliver[i].ID < redeliver[j].ID })
	sort.Slice(expired, func(i, j int) bool { return expired[i].ID < expired[j].ID })
	return redeliver, expired
}
