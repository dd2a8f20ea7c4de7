// Package digest sends the weekly digest: at report.digest's schedule
// (a day of the week and a time in report.time_zone), paged builds the
// report (package report) of the span before it from its history and
// sends it to a receiver — a Slack message with the headline numbers and
// a link to the /report page, or the report as JSON to a webhook.
//
// Each scheduled time is a period: its digest is sent once. The last one
// delivered is recorded in storage.path (digest.json, replaced with
// write-temp, fsync, rename), so that a restart neither sends it again
// nor skips it: a paged that was down at the scheduled time sends the
// digest when it starts, if the next one is not due yet. The notifier
// records each integration's delivery in its notification log before
// the state file is written, and a restart in between finds it there.
// In an HA pair the notification log is gossiped: the member first in
// the cluster's order sends, the other waits its turn and finds the
// digest sent, as with every notification (notifier.SendDigest).
package digest
