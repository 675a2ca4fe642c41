package githubapp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
)

// Store keys: one record per covered repository, and the time of the last
// full listing. All under keyPrefix, beside the webhook provider's records
// in the same bucket.
const (
	keyPrefix     = "githubapp."
	repoKeyPrefix = keyPrefix + "repo."
	syncedKey     = keyPrefix + "synced"
)

// maxListPages bounds the pages of one listing (100 entries each).
const maxListPages = 100

// covered is the record of one repository the App is installed on.
type covered struct {
	// Repo is owner/repo as GitHub spells it.
	Repo string `json:"repo"`
	// Installation is the id of the installation covering it.
	Installation int64 `json:"installation"`
	// At is when it was last seen covered (ISO-8601).
	At string `json:"at"`
}

// repoKey is the record key of a repository (names compare
// case-insensitively on GitHub; base64url keeps any name a valid key).
func repoKey(repo string) string {
	return repoKeyPrefix + base64.RawURLEncoding.EncodeToString([]byte(strings.ToLower(repo)))
}

// covering returns the installation covering repo. An unknown repository
// is listed again from GitHub when the last full listing is older than
// CoverageTTL, so an installation that changed while its delivery was
// lost is seen within that time.
func (p *Provider) covering(ctx context.Context, repo string) (int64, bool, error) {
	if c, ok, err := p.loadCovered(ctx, repo); err != nil || ok {
		return c.Installation, ok, err
	}
	if p.syncedRecently(ctx) {
		return 0, false, nil
	}
	if err := p.Sync(ctx); err != nil {
		return 0, false, err
	}
	c, ok, err := p.loadCovered(ctx, repo)
	return c.Installation, ok, err
}

func (p *Provider) loadCovered(ctx context.Context, repo string) (covered, bool, error) {
	raw, _, err := p.cfg.Store.Get(ctx, repoKey(repo))
	if errors.Is(err, sentinel.ErrNotFound) {
		return covered{}, false, nil
	}
	if err != nil {
		return covered{}, false, fmt.Errorf("github-app coverage of %s: %w", repo, err)
	}
	var c covered
	if json.Unmarshal(raw, &c) != nil || c.Installation <= 0 {
		return covered{}, false, nil
	}
	return c, true, nil
}

func (p *Provider) syncedRecently(ctx context.Context) bool {
	raw, _, err := p.cfg.Store.Get(ctx, syncedKey)
	if err != nil {
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, string(raw))
	age := p.cfg.Now().Sub(at)
	return err == nil && age >= 0 && age < p.cfg.CoverageTTL
}

// Sync lists the App's installations and the repositories of each
// (installation tokens), records every covered repository and removes the
// records of those no installation covers any more.
func (p *Provider) Sync(ctx context.Context) error {
	a, _, err := p.appAuth(ctx)
	if err != nil {
		return err
	}
	var installs []struct {
		ID int64 `json:"id"`
	}
	for page := 1; page <= maxListPages; page++ {
		var batch []struct {
			ID int64 `json:"id"`
		}
		if _, err := a.AppClient().GetJSON(ctx, "app/installations?per_page=100&page="+strconv.Itoa(page), &batch); err != nil {
			return fmt.Errorf("github-app: list installations: %w", err)
		}
		installs = append(installs, batch...)
		if len(batch) < 100 {
			break
		}
	}
	seen := map[string]bool{}
	for _, in := range installs {
		repos, err := p.installationRepos(ctx, in.ID)
		if err != nil {
			return err
		}
		for _, r := range repos {
			seen[repoKey(r)] = true
			if err := p.putCovered(ctx, r, in.ID); err != nil {
				return err
			}
		}
	}
	keys, err := p.cfg.Store.Keys(ctx)
	if err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		return fmt.Errorf("github-app: list coverage: %w", err)
	}
	for _, k := range keys {
		if strings.HasPrefix(k, repoKeyPrefix) && !seen[k] {
			if err := p.cfg.Store.Delete(ctx, k); err != nil && !errors.Is(err, sentinel.ErrNotFound) {
				return fmt.Errorf("github-app: drop coverage: %w", err)
			}
		}
	}
	_, err = p.cfg.Store.Put(ctx, syncedKey, []byte(sentinel.FormatTime(p.cfg.Now())))
	if err != nil {
		return fmt.Errorf("github-app: record listing: %w", err)
	}
	p.cfg.Log.Info("github-app coverage listed", "installations", len(installs), "repositories", len(seen))
	return nil
}

// installationRepos lists GET /installation/repositories with the
// installation's token.
func (p *Provider) installationRepos(ctx context.Context, installation int64) ([]string, error) {
	c, err := p.InstallationClient(ctx, installation)
	if err != nil {
		return nil, err
	}
	var out []string
	for page := 1; page <= maxListPages; page++ {
		var body struct {
			Repositories []struct {
				FullName string `json:"full_name"`
			} `json:"repositories"`
		}
		if _, err := c.GetJSON(ctx, "installation/repositories?per_page=100&page="+strconv.Itoa(page), &body); err != nil {
			return nil, fmt.Errorf("github-app: list repositories of installation %d: %w", installation, err)
		}
		for _, r := range body.Repositories {
			if r.FullName != "" {
				out = append(out, r.FullName)
			}
		}
		if len(body.Repositories) < 100 {
			break
		}
	}
	return out, nil
}

func (p *Provider) putCovered(ctx context.Context, repo string, installation int64) error {
	raw, err := json.Marshal(covered{Repo: repo, Installation: installation, At: sentinel.FormatTime(p.cfg.Now())})
	if err != nil {
		return fmt.Errorf("github-app: encode coverage: %w", err)
	}
	if _, err := p.cfg.Store.Put(ctx, repoKey(repo), raw); err != nil {
		return fmt.Errorf("github-app: record coverage of %s: %w", repo, err)
	}
	return nil
}

func (p *Provider) dropCovered(ctx context.Context, repo string) error {
	if err := p.cfg.Store.Delete(ctx, repoKey(repo)); err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		return fmt.Errorf("github-app: drop coverage of %s: %w", repo, err)
	}
	return nil
}

// dropInstallation removes the records of every repository the
// installation covers (an uninstall or a suspension).
func (p *Provider) dropInstallation(ctx context.Context, installation int64) error {
	keys, err := p.cfg.Store.Keys(ctx)
	if err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		return fmt.Errorf("github-app: list coverage: %w", err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, repoKeyPrefix) {
			continue
		}
		raw, _, err := p.cfg.Store.Get(ctx, k)
		if err != nil {
			continue
		}
		var c covered
		if json.Unmarshal(raw, &c) == nil && c.Installation == installation {
			if err := p.dropCovered(ctx, c.Repo); err != nil {
				return err
			}
		}
	}
	return nil
}

// installationEvent is what installation and installation_repositories
// deliveries say.
type installationEvent struct {
	Action       string `json:"action"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Repositories        []repoRef `json:"repositories"`
	RepositoriesAdded   []repoRef `json:"repositories_added"`
	RepositoriesRemoved []repoRef `json:"repositories_removed"`
}

type repoRef struct {
	FullName string `json:"full_name"`
}

// errBadInstallation is the reason of an installation delivery that names
// no installation.
var errBadInstallation = errors.New("installation delivery without an installation id")

// applyInstallation keeps the coverage current from one installation or
// installation_repositories delivery (already verified).
func (p *Provider) applyInstallation(ctx context.Context, event string, body []byte) error {
	var ev installationEvent
	if err := json.Unmarshal(body, &ev); err != nil {
		return fmt.Errorf("github-app: %s delivery: %w", event, err)
	}
	if ev.Installation.ID <= 0 {
		return errBadInstallation
	}
	id := ev.Installation.ID
	switch {
	case event == "installation" && (ev.Action == "deleted" || ev.Action == "suspend"):
		return p.dropInstallation(ctx, id)
	case event == "installation" && ev.Action == "unsuspend" && len(ev.Repositories) == 0:
		return p.syncInstallation(ctx, id)
	case event == "installation":
		return p.putAll(ctx, ev.Repositories, id)
	case event == "installation_repositories":
		if err := p.putAll(ctx, ev.RepositoriesAdded, id); err != nil {
			return err
		}
		for _, r := range ev.RepositoriesRemoved {
			if r.FullName == "" {
				continue
			}
			if err := p.dropCovered(ctx, r.FullName); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *Provider) putAll(ctx context.Context, repos []repoRef, installation int64) error {
	for _, r := range repos {
		if r.FullName == "" {
			continue
		}
		if err := p.putCovered(ctx, r.FullName, installation); err != nil {
			return err
		}
	}
	return nil
}

// syncInstallation lists one installation's repositories again.
func (p *Provider) syncInstallation(ctx context.Context, installation int64) error {
	repos, err := p.installationRepos(ctx, installation)
	if err != nil {
		return err
	}
	return p.putAll(ctx, refs(repos), installation)
}

func refs(names []string) []repoRef {
	out := make([]repoRef, 0, len(names))
	for _, n := range names {
		out = append(out, repoRef{FullName: n})
	}
	return out
}
