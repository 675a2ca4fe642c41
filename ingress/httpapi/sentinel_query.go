package httpapi

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// ParseSentinelQuery reads GET /sentinels' parameters: the filters status,
// provider, session and subject (a prefix), and the paging limit
// (1..api.MaxSentinelPage) and after (a next cursor). after without limit
// pages by api.DefaultSentinelPage; neither answers every match. A bad
// value is invalid_input (invalid_session_id for a malformed session).
func ParseSentinelQuery(v url.Values) (api.SentinelQuery, error) {
	q := api.SentinelQuery{
		Status:        sentinel.Status(strings.TrimSpace(v.Get("status"))),
		Provider:      strings.TrimSpace(v.Get("provider")),
		Session:       strings.TrimSpace(v.Get("session")),
		SubjectPrefix: strings.TrimSpace(v.Get("subject")),
		After:         strings.TrimSpace(v.Get("after")),
	}
	if s := strings.TrimSpace(v.Get("limit")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > api.MaxSentinelPage {
			return q, sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be an integer within 1..%d", api.MaxSentinelPage)
		}
		q.Limit = n
	} else if q.After != "" {
		q.Limit = api.DefaultSentinelPage
	}
	return q, q.Validate()
}
