package agentpush_test

import (
	"fmt"
	"testing"

	"github.com/agentproto/sentinel/providers/providertest"
)

func TestConformance(t *testing.T) {
	f := newFixture(t, nil)
	n := 0
	var subID string
	providertest.RunPoller(t, providertest.Harness{
		Provider: f.p,
		Subject:  "jira:PROJ-1",
		Emit: func(t providertest.T, count int) {
			if subID == "" {
				for _, s := range f.srv.Subscriptions() {
					subID = s.ID
				}
			}
			for i := 0; i < count; i++ {
				n++
				ev := event(fmt.Sprintf("evt_conf_%d", n))
				ev.Subject, ev.Subjects = "jira:PROJ-1", []string{"jira:PROJ-1"}
				f.srv.Enqueue(subID, ev)
			}
		},
	})
}
