package slackchart

import (
	"io"
	"testing"
)

// BenchmarkRender draws a realistic chart: four series of 360 points,
// a threshold and a firing period.
func BenchmarkRender(b *testing.B) {
	c := kvCache()
	b.ReportAllocs()
	for b.Loop() {
		if err := Render(io.Discard, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderDense draws eight of twelve series of 5,760 samples.
func BenchmarkRenderDense(b *testing.B) {
	c := dense()
	b.ReportAllocs()
	for b.Loop() {
		if err := Render(io.Discard, c); err != nil {
			b.Fatal(err)
		}
	}
}
