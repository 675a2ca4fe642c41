//go:build !race

package quota_test

// clusterSentinels is the sentinel count of the cluster budget test (the
// issue's 2,000).
const clusterSentinels = 2000
