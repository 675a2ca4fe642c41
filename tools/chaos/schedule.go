package chaos

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind is one kind of fault the nemesis injects.
type Kind string

// The fault kinds.
const (
	// Kill SIGKILLs a node, keeps it down for the hold, then starts it.
	Kill Kind = "kill"
	// Pause SIGSTOPs a node for the hold (longer than bus.ack_wait), then
	// SIGCONTs it.
	Pause Kind = "pause"
	// Restart stops a node gracefully (SIGTERM) and starts it again.
	Restart Kind = "restart"
	// Partition cuts a node off the network for the hold, then reconnects
	// it (compose only: docker network disconnect / connect).
	Partition Kind = "partition"
)

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case Kill, Pause, Restart, Partition:
		return k, nil
	}
	return "", fmt.Errorf("unknown fault kind %q: use kill, pause, restart or partition", s)
}

// Fault is one planned fault: not before At (from the start of the
// workload), of Kind, on node Node (0-based), held for Hold.
type Fault struct {
	At   time.Duration `json:"-"`
	Kind Kind          `json:"kind"`
	Node int           `json:"node"`
	Hold time.Duration `json:"-"`
	// AtMs and HoldMs are At and Hold for the JSON report.
	AtMs   int64 `json:"atMs"`
	HoldMs int64 `json:"holdMs"`
}

// String is the fault as the schedule prints it.
func (f Fault) String() string {
	s := fmt.Sprintf("t+%5.1fs %-9s node %d", f.At.Seconds(), f.Kind, f.Node+1)
	if f.Hold > 0 {
		s += fmt.Sprintf(" for %.1fs", f.Hold.Seconds())
	}
	return s
}

// PlanOptions shape a schedule.
type PlanOptions struct {
	// Duration bounds the workload; no fault is planned to end later than
	// Duration minus Tail.
	Duration time.Duration
	// Nodes is the number of nodes a fault may hit.
	Nodes int
	// Kinds are the fault kinds drawn from (uniformly).
	Kinds []Kind
	// AckWait is the nodes' bus.ack_wait: a pause holds longer than it.
	AckWait time.Duration
	// Warmup is fault-free time at the start; Tail fault-free time at the
	// end; Gap the least time between a fault's heal and the next fault
	// (a recovery allowance, RecoveryAllowance, is added to it).
	Warmup, Tail, Gap time.Duration
	// RecoveryAllowance is the time a node takes to come back after a kill
	// or a restart (its start to ready), counted in the plan so that
	// planned times stay close to real ones; a pause or a partition heals
	// with no start and counts a quarter of it.
	RecoveryAllowance time.Duration
}

// Plan draws the fault schedule from seed: the same seed and options give
// the same schedule. Faults are sequential (one node faulty at a time, so
// a majority of three stays up): each is planned after the previous one's
// hold, its recovery allowance and a random gap.
func Plan(seed uint64, o PlanOptions) []Fault {
	if o.Nodes <= 0 || len(o.Kinds) == 0 || o.Duration <= 0 {
		return nil
	}
	r := rand.New(rand.NewPCG(seed, 0x5e471e1c4a05))
	between := func(lo, hi time.Duration) time.Duration {
		// In tenths of a second, so printed schedules read exactly.
		steps := int64((hi - lo) / (100 * time.Millisecond))
		if steps <= 0 {
			return lo
		}
		return lo + time.Duration(r.Int64N(steps+1))*100*time.Millisecond
	}
	var out []Fault
	at := o.Warmup
	for {
		at += between(0, o.Gap)
		k := o.Kinds[r.IntN(len(o.Kinds))]
		n := r.IntN(o.Nodes)
		var hold time.Duration
		recover := o.RecoveryAllowance
		switch k {
		case Kill:
			hold = between(time.Second, 4*time.Second)
		case Pause:
			hold = o.AckWait + between(time.Second, 3*time.Second)
			recover /= 4
		case Partition:
			hold = between(3*time.Second, 8*time.Second)
			recover /= 4
		}
		if at+hold+recover > o.Duration-o.Tail {
			return out
		}
		out = append(out, Fault{At: at, Kind: k, Node: n, Hold: hold, AtMs: at.Milliseconds(), HoldMs: hold.Milliseconds()})
		at += hold + recover + o.Gap
	}
}

// UnmarshalJSON reads a fault of a JSON report (At and Hold from their
// milliseconds).
func (f *Fault) UnmarshalJSON(raw []byte) error {
	type plain Fault
	var p plain
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	*f = Fault(p)
	f.At, f.Hold = time.Duration(f.AtMs)*time.Millisecond, time.Duration(f.HoldMs)*time.Millisecond
	return nil
}
