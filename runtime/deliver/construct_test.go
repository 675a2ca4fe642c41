package deliver_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// NewPipeline and NewWorkers refuse a missing dependency by name instead
// of failing on it at the first event.
func TestConstructorsNameAMissingDependency(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	full := deliver.PipelineDeps{Store: e.Store, Seen: e.Seen, Registry: e.Registry, Router: e.Pipeline.Router(), Park: e.Park, Expirer: e.Expirer}
	_, err := deliver.NewPipeline(full)
	require.NoError(t, err)
	for name, unset := range map[string]func(d *deliver.PipelineDeps){
		"Store":    func(d *deliver.PipelineDeps) { d.Store = nil },
		"Seen":     func(d *deliver.PipelineDeps) { d.Seen = nil },
		"Registry": func(d *deliver.PipelineDeps) { d.Registry = nil },
		"Router":   func(d *deliver.PipelineDeps) { d.Router = nil },
		"Park":     func(d *deliver.PipelineDeps) { d.Park = nil },
		"Expirer":  func(d *deliver.PipelineDeps) { d.Expirer = nil },
	} {
		d := full
		unset(&d)
		p, err := deliver.NewPipeline(d)
		require.ErrorIs(t, err, deliver.ErrMissingDep, name)
		require.ErrorContains(t, err, name)
		require.Nil(t, p)
	}
	_, err = deliver.NewWorkers(nil, e.Pipeline)
	require.ErrorIs(t, err, deliver.ErrMissingDep)
	require.ErrorContains(t, err, "EventLog")
	_, err = deliver.NewWorkers(e.Bus.Bus, nil)
	require.ErrorIs(t, err, deliver.ErrMissingDep)
	require.ErrorContains(t, err, "Pipeline")
}
