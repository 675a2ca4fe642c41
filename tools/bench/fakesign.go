package bench

import "github.com/agentproto/sentinel/providers/fake"

// FakePushSignature returns the header and value that sign a push of body
// to the test-only fake provider of a node started with
// testing.fake_provider (its default secret). The harnesses of `sentinel
// bench` and `sentinel chaos` sign their pushes to child nodes with it; an
// in-process node's provider signs the same way. It lives with the tools:
// the node itself never signs a fake push.
func FakePushSignature(body []byte) (header, value string) {
	return fake.SignatureHeader, fake.New(fake.Config{}).Sign(body)
}
