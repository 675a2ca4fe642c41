// Package githubapp is the github-app provider: a GitHub App installed on
// an organization or account watches every repository it covers through
// one webhook, the reserved route /inbound/sentinel-github-app (RouteKey),
// with no repository hook and no admin right on the repositories.
//
// Setup (setup_sentinel_provider / `sentinel setup github-app`, operator
// scope) gives the App id, the path of its private key (a PEM file kept
// 0600), the webhook secret and, for GitHub Enterprise, the REST base URL.
// The provider signs an RS256 App JWT, exchanges it for installation
// tokens, cached in memory until a few minutes before they expire
// (github.AppAuth), and never logs or stores a token. The set of covered
// repositories is kept in the provider's KV (coverage.go), from the App's
// installations and from installation and installation_repositories
// deliveries; a watch on a repository outside it fails naming the fix.
// Failed deliveries are asked for again through the App's delivery log
// (reconcile.go).
//
// It imports providers, providers/github and the root only: never another
// provider, the bus, runtime or ingress.
package githubapp
