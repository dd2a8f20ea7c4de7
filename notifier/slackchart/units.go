package slackchart

import (
	"math"
	"strconv"
	"strings"
)

// A scale writes values of one unit: the values are divided by div and
// suffixed by suffix ("97.3%", "1.2k", "350 ms"); zero is "0" and zero's
// suffix ("0", "0 s").
type scale struct {
	div          float64
	suffix, zero string
}

// scaleFor picks the scale of a unit for values up to about mag in
// absolute value, so that every label of an axis shares one suffix.
// Units are Grafana's ids, as paged's dashboards use them; an unknown
// unit is written as a plain number and named beside the axis.
func scaleFor(unit string, mag float64) scale {
	switch unit {
	case "percentunit":
		return scale{0.01, "%", "%"}
	case "percent":
		return scale{1, "%", "%"}
	case "s", "seconds":
		return secondsScale(mag)
	case "ms":
		s := secondsScale(mag / 1000)
		s.div *= 1000
		return s
	case "bytes":
		return step(mag, 1024, scale{1, " B", " B"}, []string{" KiB", " MiB", " GiB", " TiB", " PiB"})
	case "celsius":
		return scale{1, "°C", "°C"}
	case "reqps":
		s := siScale(mag)
		s.suffix, s.zero = s.suffix+" req/s", " req/s"
		return s
	case "ops":
		s := siScale(mag)
		s.suffix, s.zero = s.suffix+" ops/s", " ops/s"
		return s
	}
	return siScale(mag)
}

// knownUnit tells whether scaleFor writes unit in the labels.
func knownUnit(unit string) bool {
	switch unit {
	case "", "short", "none", "percentunit", "percent", "s", "seconds", "ms", "bytes", "celsius", "reqps", "ops":
		return true
	}
	return false
}

func siScale(mag float64) scale {
	return step(mag, 1000, scale{1, "", ""}, []string{"k", "M", "G", "T", "P"})
}

func secondsScale(mag float64) scale {
	switch {
	case mag == 0 || mag >= 1 && mag < 60:
		return scale{1, " s", " s"}
	case mag < 1e-3:
		return scale{1e-6, " µs", " s"}
	case mag < 1:
		return scale{1e-3, " ms", " s"}
	case mag < 3600:
		return scale{60, " min", " s"}
	case mag < 86400:
		return scale{3600, " h", " s"}
	}
	return scale{86400, " d", " s"}
}

func step(mag, base float64, s scale, suffixes []string) scale {
	for _, suf := range suffixes {
		if mag < base*s.div {
			break
		}
		s.div, s.suffix = s.div*base, suf
	}
	return s
}

// format writes v with decimals digits after the point at most.
func (s scale) format(v float64, decimals int) string {
	x := v / s.div
	if math.Abs(x) < 0.5*math.Pow10(-decimals) {
		return "0" + s.zero
	}
	return trimZeros(strconv.FormatFloat(x, 'f', decimals, 64)) + s.suffix
}

// trimZeros drops the zeros that end a decimal fraction: 2.50 is 2.5,
// 5.0 is 5.
func trimZeros(t string) string {
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return t
}

// humanize writes one value with three significant digits at most, in
// the unit's best scale for it: 0.973 percentunit is "97.3%".
func humanize(v float64, unit string) string {
	if !finite(v) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	s := scaleFor(unit, math.Abs(v))
	x := math.Abs(v / s.div)
	switch {
	case x == 0:
		return "0" + s.zero
	case x < 1e-3 || x >= 1e6:
		return strconv.FormatFloat(v/s.div, 'g', 3, 64) + s.suffix
	}
	return trimZeros(strconv.FormatFloat(v/s.div, 'f', max(0, 2-magnitude(x)), 64)) + s.suffix
}

// magnitude is the power of ten of x's leading digit.
func magnitude(x float64) int {
	if x == 0 {
		return 0
	}
	return int(math.Floor(math.Log10(x)))
}

// niceStep rounds a tick step up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || !finite(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// decimalsFor is how many digits after the point write multiples of
// the tick step x exactly (0.25: 2).
func decimalsFor(x float64) int {
	d := 0
	for d < 12 && math.Abs(x*math.Pow10(d)-math.Round(x*math.Pow10(d))) > 1e-6*x*math.Pow10(d) {
		d++
	}
	return d
}
