// Package github holds the GitHub code shared by the GitHub providers
// (local-gh and webhook): the Runner that drives the host's gh CLI (and its
// `gh api -i` helper), credentials and host taken from the host's gh setup
// (`gh auth token`, GH_HOST), the in-process REST Client with conditional
// requests, pagination (GetPages: Link rel="next", one conditional GET per
// page) and rate-limit handling, the readiness probe, and the REST
// resource shapes the providers read. Webhook payload normalization and
// signature verification live here too, in their own files.
//
// Security: a token is only ever held in memory and placed in an
// Authorization header. It is never logged, persisted, put in argv or in an
// error message.
//
// Imports: the sentinel domain package, providers and the standard library.
// It must not import the bus, runtime or ingress packages, nor any provider.
package github
