package github

import "strings"

// GhostLogin is the account GitHub shows in place of a deleted user: its
// reviews, comments and pull requests stay, signed "ghost".
const GhostLogin = "ghost"

// IsGhost reports whether login is GitHub's stand-in for a deleted user.
// Such an account is never this node's own identity and never a
// maintainer, whatever association GitHub reports with it.
func IsGhost(login string) bool { return strings.EqualFold(login, GhostLogin) }

// IsBotAccount reports whether an account is a bot: type "Bot" (a GitHub
// App's bot user, Copilot's reviewer among them) or a login ending in
// "[bot]" (name[bot], the form App bots take).
func IsBotAccount(login, typ string) bool {
	return strings.EqualFold(typ, "Bot") || strings.HasSuffix(login, "[bot]")
}

// TrustedAssociation returns the author association to report for an
// author: GitHub's own, except "NONE" for the ghost account (a deleted
// user is nobody's maintainer, even when the payload still says OWNER).
func TrustedAssociation(login, association string) string {
	if IsGhost(login) {
		return "NONE"
	}
	return association
}
