package cli

// chaosVerbs are the reliability verbs (sentinel chaos).
var chaosVerbs = []verbBuilder{newChaosCmd}
