package compose

import (
	"testing"
	"time"
)

// deploy/compose.external.yml: a three-server NATS cluster built FROM
// scratch and two stateless sentinel nodes in external mode come up
// healthy; an event created on one node is delivered through the other.
func TestComposeExternalNATS(t *testing.T) {
	needDocker(t)
	services := []string{"nats1", "nats2", "nats3", "sentinel1", "sentinel2"}
	p := newProject(t, "deploy/compose.external.yml",
		map[string]string{"sentinel1": "SENTINEL_EXT_PORT_1", "sentinel2": "SENTINEL_EXT_PORT_2"}, "sentinel1", "sentinel2")
	stage(t, "up", p.up)
	stage(t, "wait for three NATS servers and two nodes healthy", func() { p.waitHealthy(3*time.Minute, services...) })
	stage(t, "smoke: create on sentinel1, deliver to sentinel2, read on sentinel1", func() {
		id := createFakeSentinel(t, p.url("sentinel1"), p.token, "github:acme/widgets#1", "ext")
		pushUntilStored(t, []string{p.url("sentinel2")}, id, envelope(t, "evt_ext_1", "github:acme/widgets#1"), 30*time.Second)
		exactlyOnce(t, waitInbox(t, p.url("sentinel1"), p.token, "ext", []string{"evt_ext_1"}, time.Minute), []string{"evt_ext_1"})
	})
}
