//go:build !race

package notifier

const raceEnabled = false
