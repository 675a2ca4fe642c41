package sentinel

// Parked is one parked record: what could not be delivered, as stored on
// the parked stream and as every surface shows it. A sentinel event's
// record carries sentinelId and event; a follow digest's carries followId,
// follower and text instead; a malformed provider item is kept as item.
type Parked struct {
	// ID is the record's stable id (prk_<n>, from its stream sequence),
	// set when read: POST /parked/{id}/replay takes it.
	ID         string `json:"id,omitempty"`
	SentinelID string `json:"sentinelId,omitempty"`
	FollowID   string `json:"followId,omitempty"`
	Follower   string `json:"follower,omitempty"`
	Event      *Event `json:"event,omitempty"`
	Item       any    `json:"item,omitempty"`
	Text       string `json:"text,omitempty"`
	Reason     string `json:"reason"`
	Ts         string `json:"ts"`
	Seq        uint64 `json:"seq,omitempty"`
}
