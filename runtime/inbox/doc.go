// Package inbox stores and reads AIP-46 session inbox messages on the inbox
// stream: one subject per message so a message id is accepted once, ever;
// reads by sequence with an optional correlation filter; and waits that
// wake when a new message lands.
//
// It imports the domain and bus; never ingress, never a provider.
package inbox
