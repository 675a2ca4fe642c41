package githubtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Page sizes, as GitHub applies them.
const (
	DefaultPerPage = 30
	MaxPerPage     = 100
)

// pageInfo is where a served page lies in its list: Page (1-based), Per
// items per page, Total items in the list.
type pageInfo struct {
	Page, Per, Total int
}

// last is the number of the last page (1 for an empty list).
func (pi pageInfo) last() int { return max(1, (pi.Total+pi.Per-1)/pi.Per) }

// paginate applies per_page (default 30, max 100) and page (1-based) as
// GitHub does: a page past the end is empty.
func paginate[T any](items []T, q url.Values) ([]T, pageInfo) {
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = DefaultPerPage
	}
	per = min(per, MaxPerPage)
	pg, _ := strconv.Atoi(q.Get("page"))
	pg = max(pg, 1)
	pi := pageInfo{Page: pg, Per: per, Total: len(items)}
	lo := (pg - 1) * per
	if lo >= len(items) {
		return nil, pi
	}
	return items[lo:min(lo+per, len(items))], pi
}

// deliveryPage serves one page of a hook's delivery log (ds oldest
// first) at path, as GitHub does: newest first, per_page (default 30, max
// 100) and, instead of page numbers, an opaque cursor ("v1_<id>": the
// entries older than that delivery) that Link rel="next" carries until the
// oldest page.
func deliveryPage(ds []*delivery, path string, q url.Values) reply {
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = DefaultPerPage
	}
	per = min(per, MaxPerPage)
	from := len(ds) - 1
	if c := q.Get("cursor"); c != "" {
		id, err := strconv.ParseInt(strings.TrimPrefix(c, "v1_"), 10, 64)
		if err != nil || !strings.HasPrefix(c, "v1_") {
			return jsonReply(http.StatusBadRequest, msgBody("Invalid cursor"))
		}
		for from >= 0 && ds[from].id >= id {
			from--
		}
	}
	out := []any{}
	i := from
	for ; i >= 0 && len(out) < per; i-- {
		out = append(out, deliveryJSON(ds[i]))
	}
	rep := jsonReply(http.StatusOK, out)
	if i >= 0 {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("cursor", "v1_"+strconv.FormatInt(ds[i+1].id, 10))
		rep.next = path + "?" + v.Encode()
	}
	return rep
}

// paged marks rep as one page of a list of rp served at p (the path under
// /repos/o/r/), so ServeHTTP adds GitHub's Link header.
func paged(rep reply, rp *repo, p []string, pi pageInfo) reply {
	rep.pages = &pi
	rep.linkPath = fmt.Sprintf("/repositories/%d/%s", rp.id, strings.Join(p, "/"))
	return rep
}

// linkHeader renders GitHub's Link header for a page: rel="next" and
// rel="last" before the last page, rel="prev" and rel="first" after the
// first; "" when the list fits on one page and this is it. Like GitHub, the
// URLs name the repository by id (/repositories/ID/...) and keep every
// query parameter but page.
func linkHeader(root, linkPath string, q url.Values, pi pageInfo) string {
	last := pi.last()
	if last == 1 && pi.Page == 1 {
		return ""
	}
	at := func(n int, rel string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Set("page", strconv.Itoa(n))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, root, linkPath, v.Encode(), rel)
	}
	var parts []string
	if pi.Page > 1 {
		parts = append(parts, at(pi.Page-1, "prev"))
	}
	if pi.Page < last {
		parts = append(parts, at(pi.Page+1, "next"), at(last, "last"))
	}
	if pi.Page > 1 {
		parts = append(parts, at(1, "first"))
	}
	return strings.Join(parts, ", ")
}
