package cli

// benchVerbs are the benchmark harness verbs (sentinel bench ...).
var benchVerbs = []verbBuilder{newBenchCmd}
