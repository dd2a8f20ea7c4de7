package slackchart

import "time"

// points is about how many samples a chart's range query returns.
const points = 300

// Step is the step of the range query for a chart over start..end:
// about 300 points, in whole seconds, at least one second.
func Step(start, end time.Time) time.Duration {
	return max((end.Sub(start) / points).Round(time.Second), time.Second)
}
