package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentproto/sentinel/providers"
)

// DefaultMaxPages bounds the pages GetPages fetches of one list: 10 pages
// of per_page=100 are 1000 items (GitHub itself stops listing check runs
// and statuses of a commit around there), and a first poll of such a list
// costs at most 10 quota points.
const DefaultMaxPages = 10

// Pages is a paginated list as fetched: every page's answer, in order.
type Pages struct {
	Responses []*Response
	// Truncated reports that the list has more pages than the client's
	// MaxPages; those were not fetched.
	Truncated bool
}

// ETags returns the pages' ETags in order, or nil when one has none (the
// set cannot then tell an unchanged list).
func (p *Pages) ETags() []string {
	out := make([]string, 0, len(p.Responses))
	for _, r := range p.Responses {
		if r.ETag == "" {
			return nil
		}
		out = append(out, r.ETag)
	}
	return out
}

// GetPages fetches a paginated list conditionally: path, then each page
// the Link header's rel="next" names, up to MaxPages (Truncated says when
// more were left). Every page is its own conditional GET with its own ETag,
// so a list where nothing changed costs one 304 per page and no quota.
//
// GitHub's ETag covers a page's body, not its Link header: a full first
// page of a list listed oldest first stays the same while items are added
// after it. So a last page without rel="next" that holds exactly per_page
// items (a JSON array) is followed by a probe of the next page number,
// which answers an empty array (and then 304s) until the list grows.
//
// A next page outside the client's REST root is refused (the token is
// never sent elsewhere). Errors are those of Get.
func (c *Client) GetPages(ctx context.Context, path string) (*Pages, error) {
	out := &Pages{}
	seen := map[string]bool{}
	for {
		resp, err := c.Get(ctx, path)
		if err != nil {
			return nil, err
		}
		out.Responses = append(out.Responses, resp)
		seen[resp.URL] = true
		next, err := c.nextPage(resp)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		if next == "" || seen[c.base+"/"+strings.TrimPrefix(next, "/")] {
			return out, nil
		}
		if len(out.Responses) >= c.maxPages {
			out.Truncated = true
			return out, nil
		}
		path = next
	}
}

// nextPage returns the path (relative to the REST root) of the page after
// resp, or "" when resp is the last.
func (c *Client) nextPage(resp *Response) (string, error) {
	if next := linkRel(resp.Link, "next"); next != "" {
		rest, ok := strings.CutPrefix(next, c.base+"/")
		if !ok {
			return "", &providers.Error{Reason: providers.ReasonInvalid,
				Message: fmt.Sprintf("Link rel=\"next\" %q is outside the API root %s", truncate(next, 200), c.base)}
		}
		return "/" + rest, nil
	}
	if resp.Items <= 0 {
		return "", nil
	}
	u, perr := url.Parse(resp.URL)
	if perr != nil {
		return "", nil // not reached: resp.URL is the client's own
	}
	q := u.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30 // GitHub's default page size
	}
	if resp.Items != per {
		return "", nil
	}
	pg, _ := strconv.Atoi(q.Get("page"))
	q.Set("page", strconv.Itoa(max(pg, 1)+1))
	u.RawQuery = q.Encode()
	return strings.TrimPrefix(u.String(), c.base), nil
}

// linkRel returns the URL of the rel link in an RFC 8288 Link header ("" if
// none): `<url>; rel="next", <url>; rel="last"`.
func linkRel(header, rel string) string {
	rest := header
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			return ""
		}
		j := strings.IndexByte(rest[i:], '>')
		if j < 0 {
			return ""
		}
		target := rest[i+1 : i+j]
		rest = rest[i+j+1:]
		params := rest
		if k := strings.IndexByte(rest, '<'); k >= 0 {
			params = rest[:k]
		}
		params = strings.TrimRight(strings.TrimSpace(params), ", ")
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "rel") {
				continue
			}
			for _, r := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
				if strings.EqualFold(r, rel) {
					return target
				}
			}
		}
	}
}

// arrayLen returns the number of elements of a JSON array body, else -1.
func arrayLen(body []byte) int {
	s := strings.TrimLeft(string(body[:min(len(body), 64)]), " \t\r\n")
	if !strings.HasPrefix(s, "[") {
		return -1
	}
	var elems []json.RawMessage
	if json.Unmarshal(body, &elems) != nil {
		return -1
	}
	return len(elems)
}
