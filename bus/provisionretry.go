package bus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// provisionAttempt bounds one provisioning request. Nodes of a cluster
// start together and provision the same assets at once; a request caught
// in that race can go unanswered (see provisionAsset), so each attempt is
// bounded and retried until ctx ends.
const provisionAttempt = 5 * time.Second

// While the answer to its request has not come, provisionAsset looks
// whether the asset it asked for exists after lostAnswerCheck, then after
// twice as long each time, up to lostAnswerCheckMax (three nodes looking
// for ~40 assets at once must not flood a loaded meta leader with infos);
// haveTimeout bounds one look: a stream between its creation and its
// first leader answers no info request at all.
const (
	lostAnswerCheck    = 250 * time.Millisecond
	lostAnswerCheckMax = time.Second
	haveTimeout        = 2 * time.Second
)

// errCodeClusterNoPeers is nats-server's JSClusterNoPeersErrF ("no
// suitable peers for placement"), which a new cluster's meta leader
// answers for a while after its election, until it has heard from every
// peer (they count as offline until then).
const errCodeClusterNoPeers jetstream.ErrorCode = 10005

// provision runs fn, each attempt bounded by provisionAttempt, until it
// succeeds, is refused (a 4xx other than a timeout, a creation race or
// peers not yet known) or ctx ends.
func provision(ctx context.Context, fn func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, provisionAttempt)
		err := fn(actx)
		cancel()
		if err == nil {
			return nil
		}
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && apiErr.Code >= 400 && apiErr.Code < 500 && apiErr.Code != 408 &&
			apiErr.ErrorCode != jetstream.JSErrCodeStreamNameInUse && apiErr.ErrorCode != jetstream.JSErrCodeConsumerAlreadyExists &&
			apiErr.ErrorCode != errCodeClusterNoPeers {
			return err // a refusal, not a race: retrying cannot help
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// assetState is what a look at an asset found.
type assetState int

const (
	// assetMissing: absent, its configuration differs, or the look
	// failed: write it.
	assetMissing assetState = iota
	// assetElecting: as wanted, but its replicas have no leader yet (a
	// restarted cluster's groups elect theirs after nats-server's election
	// timeout): wait, writing nothing.
	assetElecting
	// assetReady: as wanted, with a leader.
	assetReady
)

// stateOf is the state of an asset whose configuration is as wanted or
// not (same), from its cluster info (a single server's assets have none).
func stateOf(same bool, ci *jetstream.ClusterInfo) assetState {
	switch {
	case !same:
		return assetMissing
	case ci != nil && ci.Leader == "":
		return assetElecting
	}
	return assetReady
}

// provisionAsset brings one stream, bucket or consumer to its wanted
// configuration, with a leader, and returns it. have looks at the asset;
// write creates or updates it, and runs only when have finds it missing
// or different (an asset as wanted whose replicas are still electing is
// waited for: an update would be a replicated write for nothing).
//
// When several servers ask for the same new asset at once (the nodes of a
// cluster booting together), nats-server proposes each equal request to
// its meta group but answers only one of them: the later assignments
// inherit the first one's "responded" mark, so the other requesters wait
// for an answer that never comes (nats-server 2.15,
// processStreamAssignment / processConsumerAssignment). Waiting out the
// request timeout for each of them cost a fresh three-node cluster 5 s per
// asset that lost the race, up to 50 s at first boot (docs/cluster.md,
// "Start-up"). So while write waits, the asset is looked at again (after
// lostAnswerCheck, then less and less often), and found ready it ends the
// wait.
func provisionAsset[T any](ctx context.Context, have func(context.Context) (T, assetState, error), write func(context.Context) (T, error)) (T, error) {
	var out T
	look := func(ctx context.Context) (T, assetState) {
		hctx, cancel := context.WithTimeout(ctx, haveTimeout)
		defer cancel()
		v, st, err := have(hctx)
		if err != nil {
			return v, assetMissing
		}
		return v, st
	}
	type result struct {
		v   T
		err error
	}
	err := provision(ctx, func(ctx context.Context) error {
		v, st := look(ctx)
		if st == assetReady {
			out = v
			return nil
		}
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var done chan result // nil (blocks) while no write runs
		startWrite := func() {
			done = make(chan result, 1)
			go func() {
				v, err := write(wctx)
				done <- result{v, err}
			}()
		}
		if st == assetMissing {
			startWrite()
		}
		every := lostAnswerCheck
		next := time.NewTimer(every)
		defer next.Stop()
		for {
			select {
			case r := <-done:
				if r.err == nil {
					out = r.v
				}
				return r.err
			case <-ctx.Done():
				cancel()
				if done != nil {
					<-done
				}
				return ctx.Err()
			case <-next.C:
				v, st := look(ctx)
				if st == assetReady {
					cancel()
					if done != nil {
						<-done
					}
					out = v
					return nil
				}
				if st == assetMissing && done == nil {
					startWrite()
				}
				every = min(2*every, lostAnswerCheckMax)
				next.Reset(every)
			}
		}
	})
	return out, err
}
