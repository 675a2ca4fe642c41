package app

// wireMCP wires the MCP surface (streamable HTTP at /mcp).
func (a *App) wireMCP() subsystem { return subsystem{} }
