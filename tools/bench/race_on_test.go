//go:build race

package bench

// raceOn reports a -race build: its tests send fewer events.
const raceOn = true
