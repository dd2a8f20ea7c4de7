// Package report reads the event history (package history) over a span
// of time and says how paging went: pages per alert and per receiver,
// the noisiest alerts, the flapping ones, how long pages waited for an
// acknowledgement and which never got one, pages outside working hours,
// silences by who and for how long, and delivery failures by receiver.
// paged report prints it as text, JSON or one HTML page.
//
// A page is a notification sent with firing alerts in it. The members of
// an HA pair each record what they sent: a page is counted once by its
// group, receiver and firing alerts, however many members (or
// integrations of the receiver) delivered it within DedupWindow; the
// same integration of the same member delivering it again (the group
// fired again after resolving, or repeated) is another page.
package report
