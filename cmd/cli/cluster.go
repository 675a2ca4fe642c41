package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// clusterHints name the fix for the cluster verbs' node errors.
var clusterHints = hints{
	api.CodeNodeLive:                "stop the node first (its last beat shows in `sentinel cluster`), or pass --force for a node known to be gone",
	api.CodeNodeNotFound:            "list the members and JetStream peers with `sentinel cluster`",
	api.CodeNotClustered:            "a node running alone has no other node to remove",
	api.CodePeerRemoveFailed:        "a majority of the cluster's servers must be up; see `sentinel cluster` for the meta leader",
	sentinel.CodeClusterUnavailable: "this node cannot write: ask a node of the majority with --url",
}

// NewCmdCluster builds `sentinel cluster` (the view) and its `remove`
// subcommand.
func NewCmdCluster(io IO) *cobra.Command {
	cmd := newIDCmd(io, idVerb{
		use:   "cluster",
		short: "Show the cluster: members, routes, JetStream leaders and replicas, lease owners, delivery",
		run:   clusterRun,
	})
	cmd.Long = `Show the cluster as the answering node sees it: the members (from their
heartbeats), its server's routes, the JetStream meta leader and peers, each
stream's and bucket's leader and replica state, who owns each poll partition
and periodic job, and the shared delivery consumers. A single node answers
too (mode single: one member that owns everything).`
	cmd.AddCommand(NewCmdClusterRemove(io))
	return cmd
}

func clusterRun(cmd *cobra.Command, opts *IDOptions) error {
	var view api.ClusterView
	if printed, err := opts.send(clusterHints, func(c *apiclient.Client) (err error) {
		view, err = apiclient.Cluster{C: c}.View(cmd.Context())
		return err
	}); err != nil || printed {
		return err
	}
	printCluster(&opts.ClientOptions, view, time.Now())
	return nil
}

// printCluster renders a cluster view for people.
func printCluster(o *ClientOptions, v api.ClusterView, now time.Time) {
	writable := "yes"
	if !v.Writable {
		writable = "no: " + v.WritableError
	}
	o.kv("node", v.Node+" ("+v.Mode+")", "writable", writable)

	section(o, "MEMBERS")
	w := o.table()
	row(w, "NAME", "API URL", "CLIENT URL", "STARTED", "LAST BEAT", "LIVE")
	for _, m := range v.Members {
		name := m.Name
		if m.Self {
			name += " (this node)"
		}
		row(w, name, m.APIURL, m.ClientURL, localTime(m.StartedAt), ago(now, m.BeatAt), yesNo(m.Live))
	}
	_ = w.Flush()

	section(o, "ROUTES (this node's server)")
	switch {
	case !v.RoutesKnown:
		fmt.Fprintln(o.IO.Out, "unknown (the node uses an external NATS deployment)")
	case len(v.Routes) == 0:
		fmt.Fprintln(o.IO.Out, "none")
	default:
		w = o.table()
		row(w, "SERVER", "ADDRESS", "CONNECTIONS", "RTT", "SINCE")
		for _, r := range v.Routes {
			row(w, r.Name, r.Address, strconv.Itoa(r.Connections), r.RTT, localTime(r.Since))
		}
		_ = w.Flush()
	}

	section(o, "JETSTREAM META GROUP")
	if !v.Meta.Known {
		fmt.Fprintln(o.IO.Out, "unknown: "+v.Meta.Note)
	} else {
		fmt.Fprintf(o.IO.Out, "leader: %s (%d peers, quorum %d)\n", dash(v.Meta.Leader), v.Meta.Size, v.Meta.QuorumNeeded)
		w = o.table()
		row(w, "PEER", "ROLE", "CURRENT", "OFFLINE", "LAST SEEN", "LAG")
		for _, p := range v.Meta.Peers {
			row(w, peerName(p), role(p), yesNo(p.Current), yesNo(p.Offline), activeText(p), strconv.FormatUint(p.Lag, 10))
		}
		_ = w.Flush()
	}

	section(o, "STREAMS AND BUCKETS")
	w = o.table()
	row(w, "NAME", "KIND", "REPLICAS", "LEADER", "STATE", "NOT CURRENT")
	for _, a := range v.Assets {
		var behind []string
		for _, p := range a.Peers {
			if !p.Current || p.Offline {
				behind = append(behind, p.Name)
			}
		}
		state := a.State
		if a.Error != "" {
			state += ": " + clip(a.Error, 60)
		}
		row(w, a.Name, a.Kind, strconv.Itoa(a.Replicas), a.Leader, state, strings.Join(behind, ","))
	}
	_ = w.Flush()

	section(o, "LEASES (poll partitions and periodic jobs)")
	printLeases(o, v.Leases)

	section(o, "DELIVERY")
	fmt.Fprintln(o.IO.Out, v.Delivery.Note)
	w = o.table()
	row(w, "PARTITION", "CONSUMER", "LEADER", "PENDING", "ACK PENDING", "WAITING PULLS")
	for _, p := range v.Delivery.Partitions {
		leader := p.Leader
		if p.Error != "" {
			leader = "error: " + clip(p.Error, 60)
		}
		row(w, strconv.Itoa(p.Partition), p.Consumer, leader, strconv.FormatUint(p.Pending, 10), strconv.Itoa(p.AckPending), strconv.Itoa(p.Waiting))
	}
	_ = w.Flush()

	if len(v.Errors) > 0 {
		section(o, "NOT READ")
		for _, e := range v.Errors {
			fmt.Fprintln(o.IO.Out, e)
		}
	}
}

// printLeases groups the leases by owner: the poll partitions it holds
// and its jobs.
func printLeases(o *ClientOptions, leases []api.ClusterLease) {
	polls, jobs := map[string][]string{}, map[string][]string{}
	for _, l := range leases {
		owner := l.Owner
		if owner == "" {
			owner = "(nobody: handing over)"
		}
		if strings.HasPrefix(l.Item, "poll.") {
			polls[owner] = append(polls[owner], strings.TrimPrefix(l.Item, "poll."))
		} else {
			jobs[owner] = append(jobs[owner], strings.TrimPrefix(l.Item, "job."))
		}
	}
	owners := map[string]bool{}
	for k := range polls {
		owners[k] = true
	}
	for k := range jobs {
		owners[k] = true
	}
	names := make([]string, 0, len(owners))
	for k := range owners {
		names = append(names, k)
	}
	sort.Strings(names)
	w := o.table()
	row(w, "OWNER", "POLL PARTITIONS", "JOBS")
	for _, n := range names {
		ps := polls[n]
		cell := ""
		if len(ps) > 0 {
			cell = fmt.Sprintf("%d (%s)", len(ps), strings.Join(ps, ","))
		}
		row(w, n, cell, strings.Join(jobs[n], ","))
	}
	_ = w.Flush()
}

func section(o *ClientOptions, title string) { fmt.Fprintf(o.IO.Out, "\n%s\n", title) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func role(p api.ClusterPeer) string {
	if p.Leader {
		return "leader"
	}
	return "follower"
}

func peerName(p api.ClusterPeer) string {
	if p.Self {
		return p.Name + " (this node)"
	}
	return p.Name
}

func activeText(p api.ClusterPeer) string {
	if p.Self || p.ActiveMs == 0 {
		return ""
	}
	return (time.Duration(p.ActiveMs) * time.Millisecond).String() + " ago"
}

func localTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return d.Round(100*time.Millisecond).String() + " ago"
}

// ClusterRemoveOptions are the options of `sentinel cluster remove`.
type ClusterRemoveOptions struct {
	ClientOptions
	Node  string
	Force bool
}

// NewCmdClusterRemove builds `sentinel cluster remove <node>`.
func NewCmdClusterRemove(io IO) *cobra.Command {
	opts := &ClusterRemoveOptions{}
	cmd := &cobra.Command{
		Use:   "remove <node>",
		Short: "Permanently remove a lost node: its JetStream peer, its heartbeat and its leases",
		Long: `Permanently remove a node that is gone for good (its machine is lost): its
server leaves the JetStream meta group, so the others need only a majority of
those left, and its heartbeat and leases go, so its work moves at once.

A node whose heartbeat is current is refused (exit 3, node_live): stop it
first. --force removes it anyway (a node known to be gone whose heartbeat
looks current). The node answering is never removed: ask another.

See docs/cluster.md, "Removing a lost node".`,
		Example: `  sentinel cluster remove n3
  sentinel cluster remove n3 --url http://n1:7777 --json`,
		Args: exactArgs(1, "give the name of the node to remove (see `sentinel cluster`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			opts.Node = args[0]
			return clusterRemoveRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the node even though its heartbeat is current")
	addClientFlags(cmd)
	return cmd
}

func clusterRemoveRun(cmd *cobra.Command, opts *ClusterRemoveOptions) error {
	var r api.ClusterRemoved
	req := api.ClusterRemove{Node: opts.Node, Force: opts.Force}
	if printed, err := opts.send(clusterHints, func(c *apiclient.Client) (err error) {
		r, err = apiclient.Cluster{C: c}.Remove(cmd.Context(), req)
		return err
	}); err != nil || printed {
		return err
	}
	var done []string
	if r.PeerRemoved {
		done = append(done, "its JetStream peer left the meta group")
	}
	if r.MemberRemoved {
		done = append(done, "its heartbeat was deleted")
	}
	done = append(done, fmt.Sprintf("%d leases released", r.LeasesReleased))
	fmt.Fprintf(opts.IO.Out, "Removed %s: %s.\n", r.Node, strings.Join(done, ", "))
	if r.Note != "" {
		fmt.Fprintln(opts.IO.Out, r.Note)
	}
	return nil
}
