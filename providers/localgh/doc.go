// Package localgh is the local-gh sentinel provider (slug "local-gh"): the
// zero-infrastructure GitHub provider where watching is polling. It takes
// its credentials and host from the host's gh setup (`gh auth token`,
// GH_HOST) but makes its requests in-process through the shared
// github.Client, with conditional GETs so an unchanged pull request costs
// no rate-limit quota and no gh process.
//
// Scopes: a pull request (github:owner/repo#N: closed, reviews with their
// inline comments, comments, synchronize, check suite rollups) and a
// repository (github:owner/repo, until never: opened, ready for review,
// reviews, closed, one CI verdict per head). A fork PR's checks are read in
// its head repository too. The opt-in review comment and workflow job
// events are made only for a sentinel whose types ask for them (the
// handle's state "optIn", set at create). All poll state lives in the
// handle's cursor as a JSON blob.
//
// Lists (reviews, check runs, commit statuses, comments) are read page by
// page through github.Client.GetPages, following GitHub's Link header up
// to github.DefaultMaxPages pages of 100; each page is its own conditional
// request, so a quiet poll is one 304 per page and costs no quota. A
// repository cursor never evicts an open PR: open PRs out of the pulls
// list are kept in a compact dormant form so their later closure is still
// reported (the bounds are documented at maxClosedPRs).
//
// Sentinels watching the same PR (or repository) share one fetch per poll
// tick: the poll loop runs each tick's polls in one providers.Tick, and
// every GET of the tick (keyed by its path, query included) is made once
// and its answer handed to each poll, which still diffs against its own
// cursor (share.go; 100 sentinels on 10 PRs make the requests of 10). A
// Poll outside a tick fetches for itself.
//
// Imports: sentinel, providers, providers/github and the standard library.
// It never imports the bus, runtime, ingress or another provider.
package localgh
