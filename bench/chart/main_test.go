package main

import (
	"bytes"
	"testing"

	"github.com/pagedhq/paged/notifier/slackchart"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := median(tc.v); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

// The benchmark's charts render, at the size the package announces.
func TestCharts(t *testing.T) {
	for name, c := range map[string]slackchart.Chart{"realistic": realistic(), "dense": dense(), "no data": noData()} {
		var b bytes.Buffer
		if err := slackchart.Render(&b, c); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w, h := pngSize(b.Bytes()); w != slackchart.Width || h < slackchart.Height {
			t.Errorf("%s: %d×%d", name, w, h)
		}
	}
	if w, h := pngSize([]byte("short")); w != 0 || h != 0 {
		t.Errorf("pngSize of a short input: %d×%d", w, h)
	}
}
