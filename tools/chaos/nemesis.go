package chaos

import (
	"context"
	"fmt"
	"time"
)

// FaultResult is one fault as the nemesis injected it, and the recovery
// the run measured after it.
type FaultResult struct {
	Fault    Fault  `json:"fault"`
	NodeName string `json:"nodeName"`
	// Injected and Healed are when the fault began and ended (the node
	// restarted, resumed or reconnected).
	Injected time.Time `json:"injected"`
	Healed   time.Time `json:"healed"`
	// HealthyMs is heal to every node ready again and every stream and
	// bucket current (every replica caught up).
	HealthyMs float64 `json:"healthyMs"`
	// WritesMs is injection to the moment every push sender had an event
	// accepted again (the longest write stall the fault caused); -1 when
	// a sender never got through before the next fault.
	WritesMs float64 `json:"writesMs"`
	// DeliveryMs is injection to the first inbox sighting of an event
	// accepted after it; -1 when none was seen.
	DeliveryMs float64 `json:"deliveryMs"`
	// CutNoticedMs is, for a partition, the cut to the cut-off node's own
	// health probe failing (docker exec ... /sentinel health).
	CutNoticedMs float64 `json:"cutNoticedMs,omitempty"`
	// Error is why the fault could not be injected or healed.
	Error string `json:"error,omitempty"`
}

// cutNoticer is a target that measures how long a cut-off node takes to
// report it (the compose target).
type cutNoticer interface{ CutNoticed() time.Duration }

// healthyTimeout bounds the wait for the cluster after a heal.
const healthyTimeout = 2 * time.Minute

// nemesis runs the schedule against t from start, one fault at a time,
// until the schedule or ctx ends. Each fault waits for its planned time
// (or the end of the previous fault's recovery, if later). A fault that
// cannot be injected ends the schedule: the next one could take a
// majority down.
func nemesis(ctx context.Context, t Target, c *client, start time.Time, plan []Fault, progress func(string, ...any)) []FaultResult {
	names := t.Names()
	var out []FaultResult
	for _, f := range plan {
		select {
		case <-ctx.Done():
			return out
		case <-time.After(time.Until(start.Add(f.At))):
		}
		r := FaultResult{Fault: f, NodeName: names[f.Node], Injected: time.Now(), WritesMs: -1, DeliveryMs: -1}
		progress("nemesis: %s (%s)", f, r.NodeName)
		err := inject(ctx, t, f)
		r.Healed = time.Now()
		if n, ok := t.(cutNoticer); ok && f.Kind == Partition && err == nil {
			r.CutNoticedMs = ms(n.CutNoticed())
		}
		if err == nil {
			hctx, cancel := context.WithTimeout(ctx, healthyTimeout)
			err = waitHealthy(hctx, t, c)
			cancel()
			if err != nil {
				err = fmt.Errorf("after the heal: %w", err)
			}
		}
		r.HealthyMs = float64(time.Since(r.Healed).Microseconds()) / 1000
		if err != nil {
			r.Error = err.Error()
			progress("nemesis: %s of %s: %v", f.Kind, r.NodeName, err)
			out = append(out, r)
			return out
		}
		progress("nemesis: %s of %s healed; cluster healthy %.1fs later", f.Kind, r.NodeName, r.HealthyMs/1000)
		out = append(out, r)
	}
	return out
}

// inject performs one fault and heals it after its hold.
func inject(ctx context.Context, t Target, f Fault) error {
	hold := func() error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(f.Hold):
			return nil
		}
	}
	// The heal runs even when the run is stopping: a node left paused or
	// cut off would outlive it.
	heal := context.WithoutCancel(ctx)
	switch f.Kind {
	case Kill:
		if err := t.Kill(ctx, f.Node); err != nil {
			return fmt.Errorf("kill: %w", err)
		}
		_ = hold()
		if err := t.Start(heal, f.Node); err != nil {
			return fmt.Errorf("start after the kill: %w", err)
		}
	case Pause:
		if err := t.Pause(ctx, f.Node); err != nil {
			return fmt.Errorf("pause: %w", err)
		}
		_ = hold()
		if err := t.Resume(heal, f.Node); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
	case Restart:
		if err := t.Stop(ctx, f.Node); err != nil {
			return fmt.Errorf("graceful stop: %w", err)
		}
		if err := t.Start(heal, f.Node); err != nil {
			return fmt.Errorf("start after the graceful stop: %w", err)
		}
	case Partition:
		if err := t.Cut(ctx, f.Node); err != nil {
			return fmt.Errorf("cut off: %w", err)
		}
		_ = hold()
		if err := t.Reconnect(heal, f.Node); err != nil {
			return fmt.Errorf("reconnect: %w", err)
		}
	default:
		return fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	return nil
}

// recovery fills each fault's WritesMs and DeliveryMs from the sends and
// the sightings: writes per push sender (sentinel), delivery over every
// accepted send.
func recovery(faults []FaultResult, sends []Send, seen *sightings) {
	for i := range faults {
		f := &faults[i]
		inj := f.Injected
		firstOK := map[string]time.Time{}
		senders := map[string]bool{}
		var deliver time.Time
		for _, s := range sends {
			if s.Path == "push" {
				senders[s.Sentinel] = true
			}
			if s.Outcome != Accepted || s.Done.Before(inj) {
				continue
			}
			if s.Path == "push" {
				if t, ok := firstOK[s.Sentinel]; !ok || s.Done.Before(t) {
					firstOK[s.Sentinel] = s.Done
				}
			}
			if at, ok := seen.at(s.ID); ok && (deliver.IsZero() || at.Before(deliver)) {
				deliver = at
			}
		}
		if len(senders) > 0 && len(firstOK) == len(senders) {
			var worst time.Time
			for _, t := range firstOK {
				if t.After(worst) {
					worst = t
				}
			}
			f.WritesMs = ms(worst.Sub(inj))
		}
		if !deliver.IsZero() {
			f.DeliveryMs = ms(deliver.Sub(inj))
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
