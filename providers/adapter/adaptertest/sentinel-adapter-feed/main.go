// Command sentinel-adapter-feed is the test adapter of package
// adaptertest (a feed file, and hostile modes). Run under another name
// (sentinel-adapter-<slug>) it is the adapter of that slug.
package main

import (
	"os"

	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
)

func main() { os.Exit(adaptertest.Main()) }
