// Package githubtest is the project's fake GitHub for tests: a REST and
// GraphQL server on loopback reached through a CONNECT proxy that
// terminates TLS for api.github.com with a per-test CA (a man-in-the-middle
// proxy). The real gh CLI reaches it with Env(token) and the
// in-process client with HTTPClient(), both using the real
// https://api.github.com URLs.
//
// It keeps scriptable repository state (pull requests, fork PRs whose head
// lives in another repository, reviews and their inline comments, check
// runs with their Actions job steps, commit statuses, comments, hooks and
// hook deliveries) and serves what the providers read of it (the PR of a
// commit, the review comments of a PR or review, a job), answers every GET
// with an ETag and a 304 on a matching If-None-Match, paginates lists as
// GitHub does (page and per_page, default 30, max 100; a Link header with
// rel="next"/"last"/"prev"/"first" naming the repository by id as
// /repositories/ID/..., which it also serves; the ETag covers the body, so
// a 304 carries the fresh Link), sends X-RateLimit-*
// and X-OAuth-Scopes headers, injects failures per path, logs every request
// and records any request it did not expect (Unexpected, Verify).
//
// With SetApp it is also a GitHub App's side of GitHub (app.go): /app,
// /app/installations and access tokens for App JWTs whose RS256
// signature, iss and times it checks on its clock (jwt.go),
// /installation/repositories and the repository routes for installation
// tokens (404 outside the installation, 401 once expired), and the App's
// hook deliveries and redeliveries. SetRateLimit and SetSecondaryLimit
// make it enforce a per-credential limit and a secondary burst limit
// (ratelimit.go).
package githubtest
