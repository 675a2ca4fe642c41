package cli

// adapterVerbs are the tools for adapter authors (sentinel adapter ...).
var adapterVerbs = []verbBuilder{newAdapterCmd}
