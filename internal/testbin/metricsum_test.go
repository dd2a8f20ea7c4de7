package testbin

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestMetricSumSelector: a name with equality matchers, as the
// reliability suite passes them, sums only the samples it selects.
func TestMetricSumSelector(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE paged_alerts gauge\npaged_alerts{state=\"firing\"} 3\npaged_alerts{state=\"pending\"} 4\n# TYPE up untyped\nup 1\n")
	}))
	defer srv.Close()
	for _, c := range []struct {
		name  string
		pairs []string
		want  float64
	}{
		{`paged_alerts{state="firing"}`, nil, 3},
		{`paged_alerts`, nil, 7},
		{`paged_alerts`, []string{"state", "pending"}, 4},
		{`paged_alerts{state="none"}`, nil, 0},
		{`up`, nil, 1},
		{`missing`, nil, 0},
	} {
		got, err := MetricSum(srv.URL, c.name, c.pairs...)
		if err != nil || got != c.want {
			t.Errorf("MetricSum(%s, %v) = %v, %v; want %v", c.name, c.pairs, got, err, c.want)
		}
	}
	if _, err := MetricSum(srv.URL, `paged_alerts{state=~"f.*"}`); err == nil {
		t.Error("a regexp matcher was accepted")
	}
}
