package adapter

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Prefix is the name every adapter executable starts with.
const Prefix = "sentinel-adapter-"

// slugRe is the grammar of an adapter slug (the rest of the file name).
var slugRe = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)

// ValidSlug reports whether s is a well-formed adapter slug.
func ValidSlug(s string) bool { return slugRe.MatchString(s) }

// Found is one discovered adapter executable.
type Found struct {
	Slug string `json:"slug"`
	Path string `json:"path"`
}

// Skipped is a candidate discovery passed over, and why (a shadowed
// built-in, a later duplicate, a malformed name, not executable).
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Where says where Discover looks.
type Where struct {
	// Dirs are searched in order: <home>/adapters, then adapters.paths,
	// then the entries of PATH.
	Dirs []string
	// Builtins are slugs that cannot be shadowed.
	Builtins []string
}

// SearchDirs returns the directories of discovery in order: home's
// adapters directory, paths, then PATH's entries (unless noPath).
func SearchDirs(home string, paths []string, pathEnv string, noPath bool) []string {
	var out []string
	if home != "" {
		out = append(out, filepath.Join(home, "adapters"))
	}
	out = append(out, paths...)
	if !noPath {
		out = append(out, filepath.SplitList(pathEnv)...)
	}
	return out
}

// Discover lists the adapter executables in w.Dirs: the first executable
// of each slug wins; a built-in slug, a malformed name or a file that is
// not an executable regular file is skipped with the reason. A directory
// that cannot be read is skipped silently (PATH holds many that do not
// exist). It never fails.
func Discover(w Where) ([]Found, []Skipped) {
	builtin := map[string]bool{}
	for _, b := range w.Builtins {
		builtin[b] = true
	}
	seen := map[string]string{}
	var found []Found
	var skipped []Skipped
	for _, dir := range w.Dirs {
		if dir == "" {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), Prefix) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			path := filepath.Join(dir, name)
			slug := strings.TrimPrefix(name, Prefix)
			switch {
			case !ValidSlug(slug):
				skipped = append(skipped, Skipped{Path: path, Reason: "the slug must be lower-case letters, digits and '-', starting with a letter"})
				continue
			case builtin[slug]:
				skipped = append(skipped, Skipped{Path: path, Reason: "the built-in provider " + slug + " cannot be shadowed"})
				continue
			case seen[slug] != "":
				skipped = append(skipped, Skipped{Path: path, Reason: "shadowed by " + seen[slug]})
				continue
			}
			if reason := notExecutable(path); reason != "" {
				skipped = append(skipped, Skipped{Path: path, Reason: reason})
				continue
			}
			seen[slug] = path
			found = append(found, Found{Slug: slug, Path: path})
		}
	}
	return found, skipped
}

// notExecutable says why path is not an executable regular file, or "".
func notExecutable(path string) string {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return "cannot be read: " + err.Error()
	case !st.Mode().IsRegular():
		return "not a regular file"
	case st.Mode().Perm()&0o111 == 0:
		return "not executable"
	case st.Mode().Perm()&0o022 != 0:
		return "writable by group or others (chmod go-w): anyone who can write it would run code as the node"
	}
	return ""
}
