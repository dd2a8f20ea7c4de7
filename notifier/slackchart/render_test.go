package slackchart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	outDir = flag.String("out", "", "write the rendered samples to this directory (default: a temporary one)")
	update = flag.Bool("update", false, "rewrite testdata/render.sha256")
)

// kvCache is a realistic chart: the KV cache of four vLLM servers over
// 90 minutes at a 15 s step (360 points each), one of them crossing 95%
// an hour in.
func kvCache() Chart {
	start, end := t0, t0.Add(90*time.Minute)
	step := 15 * time.Second
	var ss []Series
	for i := range 4 {
		s := Series{Labels: map[string]string{
			"instance": fmt.Sprintf("10.0.3.%d:8000", 11+i), "job": "vllm",
			"model_name": "meta-llama/Llama-3.1-70B-Instruct",
		}}
		for k := range 360 {
			t := start.Add(time.Duration(k) * step)
			base := 0.55 + 0.08*float64(i) + 0.05*math.Sin(float64(k)/17+float64(i))
			if i == 3 && k > 200 {
				base = math.Min(0.995, base+float64(k-200)*0.004)
			}
			s.Points = append(s.Points, Point{T: t, V: base})
		}
		ss = append(ss, s)
	}
	return Chart{
		Title: "VLLMKVCacheSaturated", Query: "max by (model_name, instance, job) (vllm:kv_cache_usage_perc)",
		Series: ss, Threshold: ptr(0.95), Op: ">", Unit: "percentunit",
		Start: start, End: end, FiredAt: start.Add(60 * time.Minute),
	}
}

func samplesDir(t testing.TB) string {
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			t.Fatal(err)
		}
		return *outDir
	}
	return t.TempDir()
}

func render(t testing.TB, c Chart) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, c); err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b.Bytes()
}

func decode(t testing.TB, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return img
}

// dense is twelve noisy series of 1-second samples over 96 minutes:
// more samples than the image has pixel columns.
func dense() Chart {
	start, end := t0, t0.Add(96*time.Minute)
	var ss []Series
	for i := range 12 {
		s := Series{Labels: map[string]string{"instance": fmt.Sprintf("gpu-node-%02d:8000", i), "job": "vllm"}}
		x := uint64(i + 1)
		for k := range 5760 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			noise := float64(x%1000) / 1000
			s.Points = append(s.Points, Point{T: start.Add(time.Duration(k) * time.Second), V: float64(i) + 3*math.Sin(float64(k)/600) + noise})
		}
		ss = append(ss, s)
	}
	return Chart{Title: "VLLMQueueBacklog", Query: "sum by (model_name, instance, job) (vllm:num_requests_waiting)", Series: ss, Threshold: ptr(10), Op: ">", Start: start, End: end,
		FiredAt: start.Add(40 * time.Minute), ResolvedAt: start.Add(70 * time.Minute)}
}

// samples are the charts written for people to look at.
func samples() map[string]Chart {
	kv := kvCache()
	resolved := kvCache()
	resolved.ResolvedAt = t0.Add(80 * time.Minute)
	for i := range resolved.Series[3].Points[320:] {
		resolved.Series[3].Points[320+i].V = 0.7
	}
	many := kvCache()
	many.Series = nil
	for i := range 12 {
		s := Series{Labels: map[string]string{"instance": fmt.Sprintf("gpu-node-%02d.inference.svc.cluster.local:8000", i), "job": "vllm"}}
		for k := range 120 {
			s.Points = append(s.Points, Point{T: t0.Add(time.Duration(k) * 45 * time.Second), V: float64(i) + 3*math.Sin(float64(k*(i+1))/40)})
		}
		many.Series = append(many.Series, s)
	}
	many.Title, many.Query, many.Unit, many.Threshold = "VLLMQueueBacklog", "sum by (model_name, instance, job) (vllm:num_requests_waiting)", "", ptr(10)
	ttft := Chart{
		Title: "VLLMTimeToFirstTokenHigh", Query: `histogram_quantile(0.99, sum by (le, model_name, instance, job) (rate(vllm:time_to_first_token_seconds_bucket[5m])))`,
		Threshold: ptr(5), Op: ">", Unit: "s", Start: t0, End: t0.Add(2 * time.Hour), FiredAt: t0.Add(65 * time.Minute),
	}
	s := Series{Labels: map[string]string{"instance": "10.0.0.7:8000", "model_name": "qwen", "job": "vllm"}}
	for k := range 300 {
		v := 0.3 + 0.1*math.Sin(float64(k)/9)
		switch {
		case k >= 100 && k < 110:
			v = math.NaN() // a NaN quantile: no requests
		case k >= 150 && k < 170:
			continue // stale: no sample
		case k >= 170:
			v = 4 + float64(k-170)*0.05
		}
		s.Points = append(s.Points, Point{T: t0.Add(time.Duration(k) * 24 * time.Second), V: v})
	}
	ttft.Series = []Series{s}
	noData := Chart{Title: "VLLMTargetDown", Query: `up{job="vllm"}`, Threshold: ptr(0), Op: "==", Start: t0, End: t0.Add(time.Hour), FiredAt: t0.Add(50 * time.Minute)}
	longQuery := noData
	longQuery.Query = "sum by (model_name, instance, job) (rate(vllm:request_success_total{finished_reason=\"error\"}[5m])) / sum by (model_name, instance, job) (rate(vllm:request_success_total[5m]))"
	return map[string]Chart{"dense": dense(), "kvcache": kv, "resolved": resolved, "many": many, "ttft": ttft, "nodata": noData, "nodata-long": longQuery}
}

func TestRenderSamples(t *testing.T) {
	dir := samplesDir(t)
	for name, c := range samples() {
		b := render(t, c)
		img := decode(t, b)
		if w := img.Bounds().Dx(); w != Width {
			t.Errorf("%s: width %d, want %d", name, w, Width)
		}
		if h := img.Bounds().Dy(); h < Height || h > Height+2*legendTopPad+5*LegendRowHeight {
			t.Errorf("%s: height %d, want %d and a legend of five rows at most", name, h, Height)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("samples in %s", dir)
}

// pixelsHash is the SHA-256 of an image's pixels: unlike the PNG's bytes,
// it does not change with the compressor.
func pixelsHash(img image.Image) string {
	h := sha256.New()
	b := img.Bounds()
	var px [8]byte
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			px[0], px[1], px[2], px[3] = byte(r>>8), byte(r), byte(g>>8), byte(g)
			px[4], px[5], px[6], px[7] = byte(bl>>8), byte(bl), byte(a>>8), byte(a)
			h.Write(px[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The same chart gives the same bytes, and the samples' pixels are those
// of testdata/render.sha256 (refresh with -update). The pixels are
// compared on amd64 only: other architectures fuse multiply-adds in the
// rasterizer and may differ in a few anti-aliased pixels.
func TestRenderGolden(t *testing.T) {
	const golden = "testdata/render.sha256"
	var got []string
	for _, name := range slices.Sorted(maps.Keys(samples())) {
		c := samples()[name]
		a, b := render(t, c), render(t, c)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renderings differ", name)
		}
		got = append(got, name+" "+pixelsHash(decode(t, a)))
	}
	if *update {
		if err := os.WriteFile(golden, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("pixels are compared on amd64, not %s", runtime.GOARCH)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if g := strings.Join(got, "\n") + "\n"; g != string(want) {
		t.Errorf("pixels differ from %s (look at the samples with -out DIR, then -update):\ngot:\n%swant:\n%s", golden, g, want)
	}
}

func isColour(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	return uint8(r>>8) == want.R && uint8(g>>8) == want.G && uint8(b>>8) == want.B
}

// isShade is the firing shade over white (about 251, 230, 230).
func isShade(c color.Color) bool {
	r, g, b, _ := c.RGBA()
	r, g, b = r>>8, g>>8, b>>8
	return r >= 248 && g >= 224 && g <= 236 && b >= 224 && b <= 236
}

// rowOf is the row with the most pixels of the colour, and their count.
func rowOf(img image.Image, want color.RGBA) (row, n int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		k := 0
		for x := b.Min.X; x < b.Max.X; x++ {
			if isColour(img.At(x, y), want) {
				k++
			}
		}
		if k > n {
			row, n = y, k
		}
	}
	return row, n
}

// columns tells, for every column of the image, whether a pixel of the
// row band y0..y1 passes f.
func columns(img image.Image, y0, y1 int, f func(color.Color) bool) []bool {
	b := img.Bounds()
	out := make([]bool, b.Dx())
	for x := b.Min.X; x < b.Max.X; x++ {
		for y := y0; y <= y1; y++ {
			if f(img.At(x, y)) {
				out[x-b.Min.X] = true
				break
			}
		}
	}
	return out
}

// spans are the runs of true in cs, as [first, last] columns.
func spans(cs []bool) [][2]int {
	var out [][2]int
	for x, on := range cs {
		switch {
		case on && (x == 0 || !cs[x-1]):
			out = append(out, [2]int{x, x})
		case on:
			out[len(out)-1][1] = x
		}
	}
	return out
}

// ramp is one series going from 0 to 1 over an hour, every 15 s.
func ramp() Chart {
	s := Series{Labels: map[string]string{"instance": "a"}}
	for k := range 241 {
		s.Points = append(s.Points, Point{T: t0.Add(time.Duration(k) * 15 * time.Second), V: float64(k) / 240})
	}
	return Chart{Title: "Ramp", Query: "ramp", Series: []Series{s}, Start: t0, End: t0.Add(time.Hour)}
}

// The threshold is a red dashed line across the plot, at its value.
func TestRenderThreshold(t *testing.T) {
	rows := map[float64]int{}
	for _, v := range []float64{0.25, 0.5, 0.75} {
		c := ramp()
		c.Threshold, c.Op = ptr(v), ">"
		img := decode(t, render(t, c))
		y, n := rowOf(img, thresholdRed)
		if n < Width/3 {
			t.Fatalf("threshold %v: %d red pixels on the reddest row, want a dashed line across", v, n)
		}
		rows[v] = y
	}
	if !(rows[0.75] < rows[0.5] && rows[0.5] < rows[0.25]) {
		t.Errorf("threshold rows %v: want higher values higher up", rows)
	}
	if mid := (rows[0.25] + rows[0.75]) / 2; mid-rows[0.5] > 2 || rows[0.5]-mid > 2 {
		t.Errorf("threshold rows %v: 0.5 is not halfway between 0.25 and 0.75", rows)
	}
	// Without a threshold, no red line.
	if _, n := rowOf(decode(t, render(t, ramp())), thresholdRed); n > 0 {
		t.Errorf("no threshold: %d red pixels", n)
	}
	// A threshold far above the values is still drawn: the axis takes it in.
	c := ramp()
	c.Threshold = ptr(10)
	if _, n := rowOf(decode(t, render(t, c)), thresholdRed); n < Width/3 {
		t.Errorf("threshold 10 over values up to 1: %d red pixels", n)
	}
}

// The firing period is shaded from FiredAt to ResolvedAt, or to the end.
func TestRenderFiring(t *testing.T) {
	shade := func(c Chart) [2]int {
		img := decode(t, render(t, c))
		mid := headerH*2 + plotH // the middle of the plot, in image rows
		ss := spans(columns(img, mid, mid, isShade))
		if len(ss) == 0 {
			return [2]int{-1, -1}
		}
		// Series lines and grid lines cut the shade: its extent is from
		// the first to the last shaded column.
		return [2]int{ss[0][0], ss[len(ss)-1][1]}
	}
	c := ramp()
	if s := shade(c); s[0] != -1 {
		t.Errorf("not fired: shaded columns %v", s)
	}
	c.FiredAt = t0.Add(30 * time.Minute)
	firing := shade(c)
	c.ResolvedAt = t0.Add(45 * time.Minute)
	resolved := shade(c)
	c.FiredAt, c.ResolvedAt = t0.Add(15*time.Minute), time.Time{}
	earlier := shade(c)
	if firing[0] < 0 || resolved[0] != firing[0] || resolved[1] >= firing[1] || earlier[0] >= firing[0] || earlier[1] != firing[1] {
		t.Fatalf("shaded columns: fired at 30m %v, resolved at 45m %v, fired at 15m %v", firing, resolved, earlier)
	}
	// Linear in time: 30m..60m is twice as wide as 30m..45m, and
	// 15m..60m three times.
	w30, w15, w45 := firing[1]-firing[0], resolved[1]-resolved[0], earlier[1]-earlier[0]
	if d := w30 - 2*w15; d < -4 || d > 4 {
		t.Errorf("shade widths %d (30 min) and %d (15 min)", w30, w15)
	}
	if d := 2*w45 - 3*w30; d < -6 || d > 6 {
		t.Errorf("shade widths %d (45 min) and %d (30 min)", w45, w30)
	}
	// Fired before the chart starts, resolved after it ends: the whole plot.
	c.FiredAt, c.ResolvedAt = t0.Add(-time.Hour), t0.Add(2*time.Hour)
	if all := shade(c); all[0] > earlier[0]-(w45/3) || all[1] != firing[1] {
		t.Errorf("fired before the start: shaded %v, fired at 15m %v", all, earlier)
	}
}

// NaN values and missing samples break the line; nothing is drawn at
// zero in their place.
func TestRenderGaps(t *testing.T) {
	for name, cut := range map[string]func(*Series){
		"NaN": func(s *Series) {
			for i := 80; i < 160; i++ {
				s.Points[i].V = math.NaN()
			}
		},
		"Inf": func(s *Series) {
			for i := 80; i < 160; i++ {
				s.Points[i].V = math.Inf(1 - 2*(i%2))
			}
		},
		"stale": func(s *Series) { s.Points = slices.Delete(s.Points, 80, 160) },
	} {
		c := ramp()
		for i := range c.Series[0].Points {
			c.Series[0].Points[i].V = 0.5
		}
		cut(&c.Series[0])
		img := decode(t, render(t, c))
		y, n := rowOf(img, palette[0])
		if n == 0 {
			t.Fatalf("%s: the series is not drawn", name)
		}
		// From the line down to the bottom of the image: nothing blue in
		// the gap, not even at zero, under the frame.
		blue := func(c color.Color) bool {
			r, _, b, _ := c.RGBA()
			return b>>8 > r>>8+60
		}
		ss := spans(columns(img, y-8, img.Bounds().Dy()-1, blue))
		if len(ss) < 2 {
			t.Fatalf("%s: the line is drawn in %d pieces, want 2 and the legend's: %v", name, len(ss), ss)
		}
		// The two longest pieces are the line's, the gap between them a
		// third of the hour.
		slices.SortFunc(ss, func(a, b [2]int) int { return (b[1] - b[0]) - (a[1] - a[0]) })
		a, b := ss[0], ss[1]
		if a[0] > b[0] {
			a, b = b, a
		}
		gap, total := b[0]-a[1], b[1]-a[0]
		if gap*3 < total*9/10/3 || gap*3 > total*11/10 {
			t.Errorf("%s: pieces %v and %v: gap %d of %d columns, want about a third", name, a, b, gap, total)
		}
	}
}

// Charts without anything to draw say so, and never fail or panic.
func TestRenderNoData(t *testing.T) {
	empty := Chart{Title: "T", Query: "q", Threshold: ptr(1), Op: ">", Start: t0, End: t0.Add(time.Hour)}
	want := pixelsHash(decode(t, render(t, empty)))
	nan := []Point{{t0, math.NaN()}, {t0.Add(time.Minute), math.Inf(1)}}
	for name, ss := range map[string][]Series{
		"no series":        {},
		"no points":        {{Labels: map[string]string{"a": "b"}}},
		"nil labels":       {{}},
		"NaN and Inf only": {{Labels: map[string]string{"a": "b"}, Points: nan}},
	} {
		c := empty
		c.Series = ss
		img := decode(t, render(t, c))
		if got := pixelsHash(img); got != want {
			t.Errorf("%s: differs from the no-data image", name)
		}
		if img.Bounds().Dx() != Width || img.Bounds().Dy() != Height {
			t.Errorf("%s: size %v", name, img.Bounds())
		}
		if _, n := rowOf(img, thresholdRed); n > Width/10 {
			t.Errorf("%s: a threshold line on a chart without data", name)
		}
	}
}

// Odd input draws something and returns no error.
func TestRenderOddInput(t *testing.T) {
	one := []Series{{Points: []Point{{t0.Add(time.Minute), 3}}}}
	for name, c := range map[string]Chart{
		"zero chart":          {},
		"end before start":    {Series: ramp().Series, Start: t0.Add(time.Hour), End: t0},
		"no range, one point": {Series: one},
		"one point":           {Series: one, Start: t0, End: t0.Add(time.Hour)},
		"NaN threshold":       {Series: ramp().Series, Threshold: ptr(math.NaN()), Op: ">"},
		"Inf threshold":       {Series: ramp().Series, Threshold: ptr(math.Inf(1)), Op: ">"},
		"huge values":         {Series: []Series{{Points: []Point{{t0, -1e300}, {t0.Add(time.Minute), 1e300}}}}},
		"tiny values":         {Series: []Series{{Points: []Point{{t0, 1e-300}, {t0.Add(time.Minute), 2e-300}}}}},
		"negative":            {Series: []Series{{Points: []Point{{t0, -5}, {t0.Add(time.Minute), -3}}}}, Threshold: ptr(-4), Op: "<"},
		"points outside":      {Series: ramp().Series, Start: t0.Add(20 * time.Minute), End: t0.Add(40 * time.Minute)},
		"unsorted points":     {Series: []Series{{Points: []Point{{t0.Add(time.Minute), 1}, {t0, 2}, {t0.Add(2 * time.Minute), 3}}}}},
		"fired after the end": {Series: ramp().Series, Start: t0, End: t0.Add(time.Hour), FiredAt: t0.Add(2 * time.Hour)},
		"long title":          {Title: strings.Repeat("VeryLongAlertName", 20), Query: strings.Repeat("sum(x) + ", 50) + "1", Series: ramp().Series},
		"ten days":            {Series: ramp().Series, Start: t0.Add(-10 * 24 * time.Hour), End: t0.Add(time.Hour)},
		"unknown unit":        {Series: ramp().Series, Unit: "tokens/s", Threshold: ptr(0.5), Op: ">"},
	} {
		b := render(t, c)
		if img := decode(t, b); img.Bounds().Dx() != Width {
			t.Errorf("%s: width %d", name, img.Bounds().Dx())
		}
	}
}

// Charts are drawn concurrently by the notifier's workers.
func TestRenderConcurrent(t *testing.T) {
	c := kvCache()
	want := render(t, c)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var b bytes.Buffer
			if err := Render(&b, c); err != nil || !bytes.Equal(b.Bytes(), want) {
				t.Errorf("concurrent rendering: err %v, same bytes %v", err, bytes.Equal(b.Bytes(), want))
			}
		})
	}
	wg.Wait()
}
