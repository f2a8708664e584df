//go:build race

package meshsync_test

const raceEnabled = true
