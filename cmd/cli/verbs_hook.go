package cli

// hookVerbs are the agent-harness hook verbs (sentinel hook <event>).
var hookVerbs = []verbBuilder{newHookCmd}
