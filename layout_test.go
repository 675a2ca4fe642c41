package sentinel_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentproto/sentinel"

type goPackage struct {
	ImportPath string
	Imports    []string
}

// TestImportRules enforces the dependency direction of docs/layout.md on
// production code (test files are not checked).
func TestImportRules(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the go tool")
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("go tool unavailable: %v", err)
	}
	dec := json.NewDecoder(out)
	var pkgs []goPackage
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	under := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	for _, p := range pkgs {
		me := rel(p.ImportPath)
		for _, imp := range p.Imports {
			dep := rel(imp)
			internal := strings.HasPrefix(imp, module)
			fail := func(rule string) { t.Errorf("%s imports %s: %s", me, imp, rule) }
			switch {
			case strings.HasPrefix(imp, "github.com/spf13/viper"), strings.HasPrefix(imp, "github.com/spf13/cobra"):
				if !under(me, "cmd") {
					fail("only cmd/** imports viper and cobra")
				}
			case strings.HasPrefix(imp, "github.com/nats-io/nats-server"):
				if me != "bus/embedded" {
					fail("only bus/embedded imports nats-server")
				}
			case imp == "github.com/nats-io/nats.go":
				if !under(me, "bus") {
					fail("only bus/** imports nats.go's core client (features take bus's helpers or jetstream's interfaces)")
				}
			case strings.HasPrefix(imp, "github.com/mark3labs/mcp-go"):
				if !under(me, "ingress/mcp") && !under(me, "cmd") {
					fail("only ingress/mcp imports mcp-go")
				}
			case strings.HasPrefix(imp, "github.com/creachadair/jrpc2"):
				if !under(me, "providers/adapter") {
					fail("only providers/adapter/** (the adapter protocol) imports the JSON-RPC library")
				}
			case strings.HasPrefix(imp, "github.com/go-chi/chi"):
				if !under(me, "ingress") && me != "runtime/app" {
					fail("only ingress/** (and the composition root) imports chi")
				}
			}
			if me == "" && internal {
				fail("the domain package imports nothing of the module")
			}
			if me == "" && !internal && strings.Contains(strings.Split(imp, "/")[0], ".") && imp != "github.com/oklog/ulid/v2" {
				fail("the domain package imports the stdlib (and the id library) only")
			}
			if !internal {
				continue
			}
			if under(me, "providers") && (under(dep, "bus") || under(dep, "runtime") || under(dep, "ingress") || under(dep, "cmd")) {
				fail("providers never import bus, runtime, ingress or cmd")
			}
			if under(me, "providers") && strings.Count(me, "/") >= 1 && under(dep, "providers") && strings.Count(dep, "/") >= 1 {
				own := strings.Split(me, "/")[1]
				other := strings.Split(dep, "/")[1]
				if own != other && other != "github" {
					fail("no provider imports another (shared GitHub code lives in providers/github)")
				}
			}
			if under(me, "runtime") && me != "runtime/app" && me != "runtime/runtimetest" {
				if under(dep, "ingress") || (under(dep, "providers") && dep != "providers") {
					fail("runtime/** (but runtime/app) imports no concrete provider and no ingress")
				}
			}
			if under(me, "ingress") && under(dep, "runtime") {
				fail("ingress/** never imports runtime/**")
			}
			if me == "ingress/ui" && dep != "" && dep != "ingress/api" {
				fail("ingress/ui (the dashboard) imports only ingress/api and the domain package of the module")
			}
			if me == "ingress/mcpevents" && dep != "" {
				fail("ingress/mcpevents (the MCP Events JSON-RPC layer) imports only the domain package of the module")
			}
			if me == "runtime/subscriptions" && dep != "" && dep != "bus" && dep != "runtime/sentinels" && dep != "runtime/deliver" && dep != "runtime/pause" {
				fail("runtime/subscriptions imports only bus, runtime/sentinels, runtime/deliver (the Router contract), runtime/pause and the domain")
			}
			if me == "runtime/pause" && internal {
				fail("runtime/pause (named pause points) is a leaf: the stdlib only")
			}
			if under(dep, "tools") && !under(me, "tools") && !under(me, "cmd/cli") && !under(me, "e2e") {
				fail("tools/** (bench, chaos) are not the node: only cmd/cli (their verbs) and e2e import them")
			}
			if me == "tools/chaos" && dep != "" && dep != "tools/bench" {
				fail("tools/chaos imports only tools/bench (the local cluster, the fake push signature) and the domain")
			}
			if me == "runtime/journal" && !under(dep, "bus") && dep != "" {
				fail("runtime/journal imports bus and the domain only (docs/layout.md)")
			}
			if me == "providers/adapter/kit" && dep != "" && dep != "providers" {
				fail("providers/adapter/kit (the protocol, imported by adapters in other modules) imports only the domain package and the provider contract")
			}
			if me == "runtime/storage" && dep != "" {
				fail("runtime/storage (the storage guard) imports only the domain package of the module")
			}
			if under(me, "bus") && !under(dep, "bus") && dep != "" {
				fail("bus holds no domain logic and imports no other layer")
			}
		}
	}
}
