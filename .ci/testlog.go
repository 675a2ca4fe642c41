//go:build ignore

// testlog reads `go test -json` on stdin and writes a CI log a person can
// read: each package's result line as it comes (ok, FAIL, no test files),
// then, for every package that failed, did not build or never finished
// (the go command was killed), that package's whole output in order:
// every test's lines, passing ones included, its build errors, a panic's
// goroutine dump. Plain `go test ./...` prints a failing package's output
// only once the package ends and only its failing tests' lines; this keeps
// all of it. It exits 1 when anything failed or the input ended early.
//
// Usage (from .ci/run): go test -json ./... | go run .ci/testlog.go
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json), build events
// included (ImportPath set, Action build-output or build-fail).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// maxKept bounds the output kept per package (its end is kept).
const maxKept = 64 << 20

type pkgLog struct {
	lines    []string
	size     int
	done     bool
	failed   bool
	truncate bool
}

func (p *pkgLog) add(s string) {
	p.lines = append(p.lines, s)
	p.size += len(s)
	for p.size > maxKept && len(p.lines) > 1 {
		p.size -= len(p.lines[0])
		p.lines = p.lines[1:]
		p.truncate = true
	}
}

func main() {
	code, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		code = 1
	}
	os.Exit(code)
}

func run(in io.Reader, out io.Writer) (int, error) {
	pkgs := map[string]*pkgLog{}
	get := func(name string) *pkgLog {
		p := pkgs[name]
		if p == nil {
			p = &pkgLog{}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || (e.Package == "" && e.ImportPath == "") {
			fmt.Fprintln(out, string(line)) // not an event: pass it on
			continue
		}
		switch e.Action {
		case "build-output":
			get(buildPkg(e.ImportPath)).add(e.Output)
		case "build-fail":
			p := get(buildPkg(e.ImportPath))
			p.failed, p.done = true, true
		case "output":
			p := get(e.Package)
			p.add(e.Output)
			if e.Test == "" {
				fmt.Fprint(out, e.Output) // ok, FAIL, PASS, "no test files" lines
			}
		case "pass", "skip":
			if e.Test == "" {
				get(e.Package).done = true
			}
		case "fail":
			if e.Test == "" {
				p := get(e.Package)
				p.failed, p.done = true, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return 1, fmt.Errorf("read go test -json: %w", err)
	}
	var bad []string
	for name, p := range pkgs {
		if p.failed || !p.done {
			bad = append(bad, name)
		}
	}
	sort.Strings(bad)
	for _, name := range bad {
		p := pkgs[name]
		why := "FAILED"
		if !p.done {
			why = "DID NOT FINISH"
		}
		fmt.Fprintf(out, "\n==== %s %s: its whole output follows ====\n", why, name)
		if p.truncate {
			fmt.Fprintf(out, "[the first part was dropped: %d MiB kept]\n", maxKept>>20)
		}
		for _, l := range p.lines {
			fmt.Fprint(out, l)
		}
		fmt.Fprintf(out, "==== end of %s ====\n", name)
	}
	if len(bad) > 0 {
		fmt.Fprintf(out, "\n%d package(s) failed or did not finish: %s\n", len(bad), strings.Join(bad, " "))
		return 1, nil
	}
	return 0, nil
}

// buildPkg names the package of a build event ("pkg [pkg.test]" -> pkg).
func buildPkg(importPath string) string {
	if i := strings.IndexByte(importPath, ' '); i > 0 {
		return importPath[:i]
	}
	return importPath
}
