package sessions_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sessions"
)

func TestNotifyHook(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	dir := t.TempDir()

	t.Run("command gets the message JSON on stdin, argv templated, no shell", func(t *testing.T) {
		out := filepath.Join(dir, "{sessionId}-{urgency}.json")
		e.register(t, sentinel.RegisterSession{ID: "n1", Hooks: &sentinel.SessionHooks{Notify: &sentinel.Hook{Command: []string{"tee", out}}}})
		msg, err := e.Inboxes.Send(ctx, "n1", sentinel.SendMessage{Text: "hello; $(rm -rf /)", Urgency: sentinel.UrgencySteer}, sessions.Sender{})
		require.NoError(t, err)
		file := filepath.Join(dir, "n1-steer.json")
		var got sentinel.Message
		bustest.Eventually(t, 10*time.Second, func() bool {
			raw, err := os.ReadFile(file)
			return err == nil && json.Unmarshal(raw, &got) == nil
		}, "notify hook output")
		require.Equal(t, msg.ID, got.ID)
		require.Equal(t, "hello; $(rm -rf /)", got.Text)
		require.Equal(t, sentinel.UrgencySteer, got.Urgency)
		require.Equal(t, inbox.RelationHuman, got.From.Relation)
	})
	t.Run("fyi never wakes", func(t *testing.T) {
		out := filepath.Join(dir, "fyi-{messageId}")
		e.register(t, sentinel.RegisterSession{ID: "n2", Hooks: &sentinel.SessionHooks{Notify: &sentinel.Hook{Command: []string{"tee", out}}}})
		fyi, err := e.Inboxes.Send(ctx, "n2", sentinel.SendMessage{Text: "fyi", Urgency: sentinel.UrgencyFYI}, sessions.Sender{})
		require.NoError(t, err)
		next, err := e.Inboxes.Send(ctx, "n2", sentinel.SendMessage{Text: "now"}, sessions.Sender{})
		require.NoError(t, err)
		bustest.Eventually(t, 10*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(dir, "fyi-"+next.ID))
			return err == nil
		}, "the next-turn notification")
		_, err = os.Stat(filepath.Join(dir, "fyi-"+fyi.ID))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("URL hook gets the message as the body", func(t *testing.T) {
		got := make(chan sentinel.Message, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			var m sentinel.Message
			_ = json.Unmarshal(raw, &m)
			got <- m
		}))
		t.Cleanup(srv.Close)
		e.register(t, sentinel.RegisterSession{ID: "n3", Hooks: &sentinel.SessionHooks{Notify: &sentinel.Hook{URL: srv.URL}}})
		msg, err := e.Inboxes.Send(ctx, "n3", sentinel.SendMessage{Text: "via url"}, sessions.Sender{})
		require.NoError(t, err)
		select {
		case m := <-got:
			require.Equal(t, msg.ID, m.ID)
		case <-time.After(10 * time.Second):
			t.Fatal("the URL hook was not called")
		}
	})
	t.Run("a hung hook is timed out, never blocks delivery, and the failure is visible", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "n4", Hooks: &sentinel.SessionHooks{Notify: &sentinel.Hook{Command: []string{"sleep", "30"}, TimeoutMs: 200}}})
		start := time.Now()
		_, err := e.Inboxes.Send(ctx, "n4", sentinel.SendMessage{Text: "x"}, sessions.Sender{})
		require.NoError(t, err)
		require.Less(t, time.Since(start), 5*time.Second, "delivery must not wait for the hook")
		var s sessions.Session
		bustest.Eventually(t, 10*time.Second, func() bool {
			s, err = e.Reg.Get(ctx, "n4")
			return err == nil && s.NotifyError != ""
		}, "the notify failure to be recorded")
		require.Contains(t, s.NotifyError, "timed out")
		require.NotZero(t, s.NotifyErrorTs)
		require.Len(t, e.InboxOf("n4"), 1)
	})
	t.Run("a failing hook is recorded", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "n5", Hooks: &sentinel.SessionHooks{Notify: &sentinel.Hook{Command: []string{"false"}}}})
		_, err := e.Inboxes.Send(ctx, "n5", sentinel.SendMessage{Text: "x"}, sessions.Sender{})
		require.NoError(t, err)
		bustest.Eventually(t, 10*time.Second, func() bool {
			s, err := e.Reg.Get(ctx, "n5")
			return err == nil && s.NotifyError != ""
		}, "the notify failure to be recorded")
	})
}
