// Package chaos is the machinery behind `sentinel chaos`: a workload of
// signed pushes and fake-provider polls over several sentinels and
// sessions (workload.go), a nemesis that kills, pauses and restarts nodes
// on a schedule drawn from a seed (schedule.go, nemesis.go), a target that
// is either three local `sentinel serve` processes or a compose project
// (target.go), an oracle in the manner of Jepsen's queue checker that
// classifies every event sent from the inboxes read at the end
// (oracle.go), and the report (report.go).
//
// Run (run.go) ties them together; the CLI verb is a thin front.
package chaos
