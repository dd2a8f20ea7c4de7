// Package notificationtest runs the notification_tests of `paged test
// --config paged.yaml`: what the notifier does with a set of alerts at a
// time. Routing, group labels, inhibition, silences and time intervals
// are decided by Alertmanager's own code (dispatch.Route.Match, the
// inhibit.Inhibitor, the silence.Silencer, timeinterval.Intervener) over
// the notifier's configuration; the payloads are rendered by the
// integrations paged run builds (notifier.RenderPayloads). Nothing is sent.
package notificationtest
