package sentinels

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

func TestMirrorIgnoresALateWriteOfADeletedRecord(t *testing.T) {
	c := &cache{recs: map[string]*sentinel.Sentinel{}, known: map[string]uint64{}, gone: map[string]uint64{}}
	rec := &sentinel.Sentinel{ID: "sen_A", Status: sentinel.StatusActive}
	// The watcher delivers this store's update (rev 5) and another node's
	// delete (rev 6) before the store applies its own update's result.
	c.put("sen_A", rec, 5)
	c.forget("sen_A", 6)
	c.put("sen_A", copyRecord(rec), 5)
	require.Empty(t, c.list(), "a deleted record does not come back")
	require.Empty(t, c.known)
	require.Equal(t, map[string]uint64{"sen_A": 6}, c.gone)
}
