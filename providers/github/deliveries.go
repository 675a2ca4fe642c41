package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// RedeliveryHorizon is how far back GitHub accepts redelivery requests.
const RedeliveryHorizon = 72 * time.Hour

// MaxDeliveryPages bounds the pages one read of a delivery log fetches
// (100 deliveries each, one request each).
const MaxDeliveryPages = 30

// DeliveryLog is what one read of a hook's delivery log found.
type DeliveryLog struct {
	// Deliveries are the entries read, newest first.
	Deliveries []HookDelivery
	// Pages counts the requests made.
	Pages int
	// Complete is false when MaxDeliveryPages cut the read before it
	// reached the horizon, the log's end or the previous read's newest.
	Complete bool
}

// Newest is the id of the newest entry read (0: none).
func (l DeliveryLog) Newest() int64 {
	var n int64
	for _, d := range l.Deliveries {
		n = max(n, d.ID)
	}
	return n
}

// ReadDeliveries reads the delivery log at path (app/hook/deliveries, or
// repos/{o}/{r}/hooks/{id}/deliveries), newest first, 100 a page, page by
// page through GitHub's cursor (the `cursor` of Link rel="next"). It stops
// after the page that reaches a delivery older than RedeliveryHorizon
// before now (GitHub would not redeliver it), or one with an id at or
// below through (the newest a previous complete read saw: what lies below
// was read then; 0 for none), or the log's end, or MaxDeliveryPages pages.
func ReadDeliveries(ctx context.Context, c APICaller, path string, through int64, now time.Time) (DeliveryLog, error) {
	var log DeliveryLog
	cursor := ""
	for log.Pages < MaxDeliveryPages {
		q := url.Values{"per_page": {"100"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		_, h, body, err := c.API(ctx, http.MethodGet, path+"?"+q.Encode(), nil)
		if err != nil {
			return log, err
		}
		log.Pages++
		var page []HookDelivery
		if err := json.Unmarshal(body, &page); err != nil {
			return log, fmt.Errorf("bad answer: %w", err)
		}
		log.Deliveries = append(log.Deliveries, page...)
		cursor = nextCursor(h.Get("Link"))
		if cursor == "" || len(page) == 0 || reached(page, through, now) {
			log.Complete = true
			return log, nil
		}
	}
	return log, nil
}

// reached reports a page that holds a delivery at or below through, or
// one past the redelivery horizon.
func reached(page []HookDelivery, through int64, now time.Time) bool {
	for _, d := range page {
		if through > 0 && d.ID <= through {
			return true
		}
		if at, err := time.Parse(time.RFC3339, d.DeliveredAt); err == nil && now.Sub(at) >= RedeliveryHorizon {
			return true
		}
	}
	return false
}

// nextCursor returns the cursor of a Link header's rel="next" URL ("" when
// there is no next page, or its URL carries no cursor).
func nextCursor(link string) string {
	next := linkRel(link, "next")
	if next == "" {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(u.Query().Get("cursor"))
}

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
