// Package httpapi holds the REST handlers: thin adapters that decode a
// request, call an ingress/api service and encode the answer, mapping
// errors through the api catalogue. Routes and shapes are pinned by
// docs/api.md.
package httpapi
