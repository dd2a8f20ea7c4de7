package report

import (
	"time"

	"github.com/pagedhq/paged/config"
)

// ConfigOptions are the Options of a report over from..to with the
// working hours, time zone and flapping threshold of paged.yaml's
// report: block.
func ConfigOptions(rc config.ReportConfig, from, to time.Time) Options {
	return Options{
		From: from, To: to, Location: rc.TimeZone, WorkStart: rc.WorkStart, WorkEnd: rc.WorkEnd,
		WorkingDays: rc.WorkingDays, FlappingThreshold: rc.FlappingThreshold,
	}
}
