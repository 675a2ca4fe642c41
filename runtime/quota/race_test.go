//go:build race

package quota_test

// clusterSentinels is the sentinel count of the cluster budget test: the
// race detector makes 2,000 creates over three R3 nodes take minutes on a
// small machine, so -race runs 300 (the budget logic is the same).
const clusterSentinels = 300
