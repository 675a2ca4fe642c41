// Command sentinel-adapter-gitlab is the GitLab merge request adapter of
// sentinel: install it as sentinel-adapter-gitlab in <home>/adapters, a
// directory of adapters.paths, or PATH (docs/adapters.md).
package main

import (
	"os"

	"github.com/agentproto/sentinel/adapters/gitlab"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

func main() { os.Exit(kit.Main(gitlab.New(gitlab.Config{}))) }
