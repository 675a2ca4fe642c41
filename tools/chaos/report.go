package chaos

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is one chaos run: its schedule, the faults as injected with the
// recovery after each, and the oracle's verdict.
type Report struct {
	Seed   uint64   `json:"seed"`
	Target string   `json:"target"`
	Nodes  []string `json:"nodes"`
	// Started is the start of the workload (fault times count from it).
	Started    time.Time `json:"started"`
	DurationMs int64     `json:"durationMs"`
	// WorkloadMs is how long the senders ran: the duration, or longer
	// when slow recoveries delayed the last fault.
	WorkloadMs    float64       `json:"workloadMs"`
	SettleMs      float64       `json:"settleMs"`
	FinishedMs    float64       `json:"finishedMs"`
	Kinds         []Kind        `json:"kinds"`
	Sessions      int           `json:"sessions"`
	PushSentinels int           `json:"pushSentinels"`
	PollSentinels int           `json:"pollSentinels"`
	Schedule      []Fault       `json:"schedule"`
	Faults        []FaultResult `json:"faults"`
	Paths         []PathCount   `json:"paths"`
	Verdict       Verdict       `json:"verdict"`
}

// PathCount is the sends of one path (push, poll) by outcome.
type PathCount struct {
	Path     string `json:"path"`
	Sent     int    `json:"sent"`
	Accepted int    `json:"accepted"`
	Unknown  int    `json:"unknown"`
	Refused  int    `json:"refused"`
}

func pathCounts(sends []Send, _ []Message) []PathCount {
	idx := map[string]int{}
	var out []PathCount
	for _, s := range sends {
		i, ok := idx[s.Path]
		if !ok {
			i = len(out)
			idx[s.Path] = i
			out = append(out, PathCount{Path: s.Path})
		}
		out[i].Sent++
		switch s.Outcome {
		case Accepted:
			out[i].Accepted++
		case Unknown:
			out[i].Unknown++
		default:
			out[i].Refused++
		}
	}
	return out
}

// WriteSchedule prints a schedule, one fault a line.
func WriteSchedule(w io.Writer, seed uint64, plan []Fault, names []string) error {
	if _, err := fmt.Fprintf(w, "schedule (seed %d): %d faults\n", seed, len(plan)); err != nil {
		return err
	}
	for _, f := range plan {
		name := ""
		if f.Node < len(names) {
			name = " (" + names[f.Node] + ")"
		}
		if _, err := fmt.Fprintf(w, "  %s%s\n", f, name); err != nil {
			return err
		}
	}
	return nil
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sentinel chaos: seed %d, target %s (%s), duration %s (workload ran %.1fs), started %s\n",
		r.Seed, r.Target, strings.Join(r.Nodes, ", "), time.Duration(r.DurationMs)*time.Millisecond, r.WorkloadMs/1000, r.Started.Format(time.RFC3339))
	fmt.Fprintf(&b, "workload: %d push and %d poll sentinels over %d sessions; settled in %.1fs\n\n",
		r.PushSentinels, r.PollSentinels, r.Sessions, r.SettleMs/1000)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULT\tNODE\tAT\tHOLD\tWRITES BACK\tDELIVERS\tHEALTHY AFTER HEAL\tERROR")
	for _, f := range r.Faults {
		fmt.Fprintf(tw, "%s\t%s\tt+%.1fs\t%.1fs\t%s\t%s\t%.1fs\t%s\n", f.Fault.Kind, f.NodeName,
			f.Injected.Sub(r.Started).Seconds(), f.Fault.Hold.Seconds(), secs(f.WritesMs), secs(f.DeliveryMs), f.HealthyMs/1000, f.Error)
	}
	if len(r.Faults) == 0 {
		fmt.Fprintln(tw, "(none)\t\t\t\t\t\t\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range r.Faults {
		if f.CutNoticedMs > 0 {
			fmt.Fprintf(&b, "partition of %s: it reported itself not ready (docker exec ... /sentinel health) %.1fs after the cut\n",
				f.NodeName, f.CutNoticedMs/1000)
		}
	}
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tSENT\tACCEPTED\tUNKNOWN\tREFUSED")
	for _, p := range r.Paths {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", p.Path, p.Sent, p.Accepted, p.Unknown, p.Refused)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := r.Verdict.Counts
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tEVENTS")
	for _, row := range []struct {
		name string
		n    int
	}{{"ok (exactly once)", c.OK}, {"lost", c.Lost}, {"duplicated", c.Duplicated}, {"unexpected", c.Unexpected},
		{"reordered", c.Reordered}, {"indeterminate, delivered once", c.IndeterminatePresent},
		{"indeterminate, not delivered", c.IndeterminateAbsent}, {"refused, not delivered", c.RefusedAbsent}} {
		fmt.Fprintf(tw, "%s\t%d\n", row.name, row.n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\n%d events sent, %d inbox messages read\n", c.Sent, c.Messages)
	for _, f := range r.Verdict.Findings {
		fmt.Fprintf(&b, "  %s %s: %s\n", f.Class, f.EventID, f.Detail)
	}
	if r.Verdict.Valid {
		b.WriteString("verdict: valid (nothing lost, duplicated, unexpected or reordered)\n")
	} else {
		b.WriteString("verdict: INVALID\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func secs(ms float64) string {
	if ms < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", ms/1000)
}
