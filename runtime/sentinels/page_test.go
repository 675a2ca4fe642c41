package sentinels_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// rec builds a record created at ts (ms) for session, watching subject.
func rec(ts int64, status sentinel.Status, provider, session, subject string) *sentinel.Sentinel {
	return &sentinel.Sentinel{ID: sentinel.NewSentinelID(), Status: status, Provider: provider, CreatedTs: ts,
		Spec: sentinel.Spec{Match: []sentinel.Clause{{Subject: subject}}, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: session}}}
}

// TestPageWithoutGapsOrRepeats pages through the sentinels while others
// are created (before and after the cursor) and removed between pages:
// every sentinel that exists for the whole listing is answered exactly
// once, in list order, and a removed one never shows after its removal.
func TestPageWithoutGapsOrRepeats(t *testing.T) {
	for _, mirror := range []bool{true, false} {
		t.Run(fmt.Sprintf("mirror=%v", mirror), func(t *testing.T) {
			env := bustest.Start(t)
			ctx := context.Background()
			st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
			if mirror {
				require.NoError(t, st.StartCache(ctx))
				t.Cleanup(st.StopCache)
			}
			stable := map[string]bool{}
			var transient []string
			for i := range 120 {
				// Groups of three share a createdTs: the id breaks the tie.
				r := rec(int64(1000+i/3), sentinel.StatusActive, "fake", "s1", "github:o/r#1")
				require.NoError(t, st.Create(ctx, r))
				if i%4 == 0 {
					transient = append(transient, r.ID)
				} else {
					stable[r.ID] = true
				}
			}
			all, err := st.Page(ctx, sentinels.Query{})
			require.NoError(t, err)
			require.Len(t, all.Records, 120)
			require.Empty(t, all.Next)

			// Meanwhile another writer (another node) creates and removes
			// sentinels of its own.
			other := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
			stop := make(chan struct{})
			churned := make(chan error, 1)
			go func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						churned <- nil
						return
					default:
					}
					r := rec(int64(500+i), sentinel.StatusActive, "fake", "s9", "github:o/r#9")
					if err := other.Create(ctx, r); err != nil {
						churned <- err
						return
					}
					if err := other.Delete(ctx, r.ID); err != nil {
						churned <- err
						return
					}
				}
			}()
			defer func() { close(stop); require.NoError(t, <-churned) }()
			seen := map[string]bool{}
			removed := map[string]bool{}
			var last *sentinel.Sentinel
			q := sentinels.Query{Limit: 7}
			for pages := 0; ; pages++ {
				require.Less(t, pages, 100, "the listing ends")
				p, err := st.Page(ctx, q)
				require.NoError(t, err)
				require.LessOrEqual(t, len(p.Records), 7)
				for _, r := range p.Records {
					require.False(t, seen[r.ID], "repeated %s", r.ID)
					require.False(t, removed[r.ID], "removed %s shown", r.ID)
					seen[r.ID] = true
					if last != nil {
						require.True(t, last.CreatedTs < r.CreatedTs || (last.CreatedTs == r.CreatedTs && last.ID < r.ID), "list order")
					}
					last = r
				}
				if p.Next == "" {
					break
				}
				// Churn between pages: remove a transient sentinel, create one
				// before the cursor (never shown: it sorts before) and one after
				// (shown on a later page).
				if len(transient) > 0 {
					require.NoError(t, st.Delete(ctx, transient[0]))
					removed[transient[0]] = true
					transient = transient[1:]
				}
				require.NoError(t, st.Create(ctx, rec(int64(10+pages), sentinel.StatusActive, "fake", "s1", "github:o/r#1")))
				require.NoError(t, st.Create(ctx, rec(int64(5000+pages), sentinel.StatusActive, "fake", "s1", "github:o/r#1")))
				q.After = p.Next
			}
			for id := range stable {
				require.True(t, seen[id], "gap: %s never shown", id)
			}
		})
	}
}

func TestPageFilters(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	require.NoError(t, st.StartCache(ctx))
	t.Cleanup(st.StopCache)
	recs := []*sentinel.Sentinel{
		rec(1, sentinel.StatusActive, "local-gh", "s1", "github:acme/widgets#1"),
		rec(2, sentinel.StatusError, "local-gh", "s2", "github:acme/widgets#2"),
		rec(3, sentinel.StatusActive, "webhook", "s1", "github:acme/gadgets"),
		rec(4, sentinel.StatusPaused, "fake", "s3", "github:other/x#9"),
	}
	for _, r := range recs {
		require.NoError(t, st.Create(ctx, r))
	}
	cases := []struct {
		name string
		q    sentinels.Query
		want []int
	}{
		{"none", sentinels.Query{}, []int{0, 1, 2, 3}},
		{"status", sentinels.Query{Status: sentinel.StatusActive}, []int{0, 2}},
		{"provider", sentinels.Query{Provider: "local-gh"}, []int{0, 1}},
		{"session", sentinels.Query{Session: "s1"}, []int{0, 2}},
		{"subject prefix", sentinels.Query{SubjectPrefix: "github:acme/"}, []int{0, 1, 2}},
		{"repo prefix takes its PRs", sentinels.Query{SubjectPrefix: "github:acme/widgets"}, []int{0, 1}},
		{"all at once", sentinels.Query{Status: sentinel.StatusActive, Provider: "local-gh", Session: "s1", SubjectPrefix: "github:acme"}, []int{0}},
		{"no match", sentinels.Query{Provider: "agentpush"}, nil},
		{"paged filter", sentinels.Query{SubjectPrefix: "github:acme/", Limit: 2}, []int{0, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := st.Page(ctx, tc.q)
			require.NoError(t, err)
			var got []string
			for _, r := range p.Records {
				got = append(got, r.ID)
			}
			var want []string
			for _, i := range tc.want {
				want = append(want, recs[i].ID)
			}
			require.Equal(t, want, got)
		})
	}
	// The filter's next page continues after the cursor.
	p, err := st.Page(ctx, sentinels.Query{SubjectPrefix: "github:acme/", Limit: 2})
	require.NoError(t, err)
	require.NotEmpty(t, p.Next)
	p, err = st.Page(ctx, sentinels.Query{SubjectPrefix: "github:acme/", Limit: 2, After: p.Next})
	require.NoError(t, err)
	require.Len(t, p.Records, 1)
	require.Equal(t, recs[2].ID, p.Records[0].ID)
	require.Empty(t, p.Next)
}

func TestPageRefusesABadCursor(t *testing.T) {
	env := bustest.Start(t)
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	for _, c := range []string{"x", "c1.!!!", "c1.bm9jb2xvbg", "c1.YWJjOnNlbl8x"} {
		_, err := st.Page(context.Background(), sentinels.Query{Limit: 5, After: c})
		var de *sentinel.Error
		require.True(t, errors.As(err, &de), "%q: %v", c, err)
		require.Equal(t, sentinel.CodeInvalidInput, de.Code, c)
	}
}
