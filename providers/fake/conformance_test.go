package fake_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/providers/providertest"
)

func TestConformance(t *testing.T) {
	p := fake.New(fake.Config{})
	n := 0
	providertest.RunPoller(t, providertest.Harness{
		Provider: p,
		Subject:  "github:acme/widgets#7",
		Emit: func(t providertest.T, count int) {
			ref, _ := sentinel.ParseGitHubSubject("github:acme/widgets#7")
			for i := 0; i < count; i++ {
				n++
				p.Emit(sentinel.NewEvent(fmt.Sprintf("evt_%d", n), "//fake", "a.b.c", ref.Subject(), ref.Subjects(), time.Unix(0, 0), "s", false, map[string]any{}))
			}
		},
	})
}
