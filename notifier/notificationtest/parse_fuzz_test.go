package notificationtest_test

import (
	"os"
	"testing"

	"github.com/pagedhq/paged/engine/ruletest"
	"github.com/pagedhq/paged/notifier/notificationtest"
)

// FuzzParse: a notification test file from a user never panics the
// parser, and every problem has a position.
func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/notifications.test.yaml", "testdata/failing.test.yaml", "testdata/bad/hostile.test.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("notification_tests: &a [*a]"))
	f.Add([]byte("notification_tests: {a: b}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, errs := ruletest.Parse("f.test.yaml", b)
		if len(errs) > 0 || tf == nil || tf.NotificationTests == nil {
			return
		}
		tests, bad, top := notificationtest.Parse("f.test.yaml", tf.NotificationTests)
		for _, err := range top {
			if pe, ok := err.(*notificationtest.ParseError); !ok || pe.Pos.Line == 0 {
				t.Errorf("no position: %v", err)
			}
		}
		for _, tt := range tests {
			for _, err := range bad[tt] {
				if pe, ok := err.(*notificationtest.ParseError); !ok || pe.Pos.Line == 0 {
					t.Errorf("no position: %v", err)
				}
			}
		}
	})
}
