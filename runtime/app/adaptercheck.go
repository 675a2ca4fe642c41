package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/providertest"
)

// AdapterCheckRequest is one run of `sentinel adapter test`.
type AdapterCheckRequest struct {
	// Target is an executable's path, or a slug found as the node would
	// find it (<home>/adapters, adapters.paths, PATH).
	Target string
	// Subject is a clause subject the adapter accepts (the suite creates a
	// sentinel on it).
	Subject string
	// Fields are setup fields for this run only (kept in memory, handed to
	// the adapter as its stored setup would be).
	Fields map[string]string
}

// AdapterCheckReport is what the run found.
type AdapterCheckReport struct {
	Slug    string                `json:"slug"`
	Path    string                `json:"path"`
	Results []providertest.Result `json:"results"`
}

// Failed reports whether a check failed.
func (r AdapterCheckReport) Failed() bool { return providertest.Failed(r.Results) }

// ErrAdapterNotFound: the target names no adapter executable.
var ErrAdapterNotFound = errors.New("adapter not found")

// CheckAdapter runs the provider conformance suite (the one the built-ins
// pass) against an adapter executable, through the same provider the node
// uses, after two checks of the protocol itself: the handshake, and an
// unknown method refused without the adapter dying. It starts nothing but
// the adapter, and stops it before returning.
func CheckAdapter(ctx context.Context, cfg Config, req AdapterCheckRequest, log *slog.Logger) (AdapterCheckReport, error) {
	f, err := findAdapter(cfg, req.Target)
	if err != nil {
		return AdapterCheckReport{}, err
	}
	p := adapter.New(f, cfg.Adapters, adapter.Deps{Log: log, Creds: fieldCreds{slug: f.Slug, fields: req.Fields}})
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		p.Process().Stop(sctx, adapterStopGrace)
	}()
	rep := AdapterCheckReport{Slug: f.Slug, Path: f.Path}
	start := time.Now()
	res := providertest.Result{Name: "handshake (describe)", Outcome: providertest.Pass}
	if reason := p.Unavailable(ctx); reason != "" {
		res.Outcome, res.Detail = providertest.Fail, reason
	}
	res.Ms = time.Since(start).Milliseconds()
	rep.Results = append(rep.Results, res)

	start = time.Now()
	res = providertest.Result{Name: "an unknown method is refused, the adapter keeps running", Outcome: providertest.Pass}
	err = p.Process().Call(ctx, "sentinel.noSuchMethod", nil, nil)
	switch {
	case rep.Results[0].Outcome == providertest.Fail:
		res.Outcome, res.Detail = providertest.Skip, `needs the "handshake" check to pass`
	case !errors.Is(err, adapter.ErrProtocol) || !p.Process().State().Running:
		res.Outcome, res.Detail = providertest.Fail, fmt.Sprintf("want a method-not-found answer and a live process, got %v", err)
	}
	res.Ms = time.Since(start).Milliseconds()
	rep.Results = append(rep.Results, res)

	start = time.Now()
	res = providertest.Result{Name: "readiness", Outcome: providertest.Pass}
	if r := p.Readiness(ctx); !r.Ready {
		res.Outcome, res.Detail = providertest.Fail, "not ready: "+r.Reason
	}
	res.Ms = time.Since(start).Milliseconds()
	rep.Results = append(rep.Results, res)

	rep.Results = append(rep.Results, providertest.Check(providertest.Harness{Provider: p, Subject: req.Subject})...)
	return rep, nil
}

// findAdapter resolves a path (anything with a slash) or a slug.
func findAdapter(cfg Config, target string) (adapter.Found, error) {
	if strings.ContainsRune(target, os.PathSeparator) {
		abs, err := filepath.Abs(target)
		if err != nil {
			return adapter.Found{}, err
		}
		slug, ok := strings.CutPrefix(filepath.Base(abs), adapter.Prefix)
		if !ok || !adapter.ValidSlug(slug) {
			return adapter.Found{}, fmt.Errorf("%w: %s is not named %s<slug>", ErrAdapterNotFound, target, adapter.Prefix)
		}
		if _, err := os.Stat(abs); err != nil {
			return adapter.Found{}, fmt.Errorf("%w: %v", ErrAdapterNotFound, err)
		}
		return adapter.Found{Slug: slug, Path: abs}, nil
	}
	found, skipped := discover(cfg)
	for _, f := range found {
		if f.Slug == target {
			return f, nil
		}
	}
	for _, s := range skipped {
		if filepath.Base(s.Path) == adapter.Prefix+target {
			return adapter.Found{}, fmt.Errorf("%w: %s skipped: %s", ErrAdapterNotFound, s.Path, s.Reason)
		}
	}
	return adapter.Found{}, fmt.Errorf("%w: no %s%s in <home>/adapters, adapters.paths or PATH", ErrAdapterNotFound, adapter.Prefix, target)
}

// fieldCreds hands one adapter the setup fields of a check run.
type fieldCreds struct {
	slug   string
	fields map[string]string
}

func (c fieldCreds) Credentials(_ context.Context, slug string) (map[string]string, error) {
	out := map[string]string{}
	if slug == c.slug {
		for k, v := range c.fields {
			out[k] = v
		}
	}
	return out, nil
}

var _ providers.CredentialSource = fieldCreds{}
