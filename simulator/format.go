package simulator

import (
	"math"
	"strconv"
	"strings"
)

// formatFunc writes a sample value (or a bucket bound) the way one client
// library does. Each server family is exposed by a different library, and the
// captures show their spelling differs ("1.0", "1", "1e+06").
type formatFunc func(float64) string

// special spells the infinities as every exposition format does, and NaN
// as nan, the library's own spelling.
func special(v float64, nan string) (string, bool) {
	switch {
	case math.IsInf(v, 1):
		return "+Inf", true
	case math.IsInf(v, -1):
		return "-Inf", true
	case math.IsNaN(v):
		return nan, true
	}
	return "", false
}

// formatPython spells a float like Python's prometheus_client
// (floatToGoString): repr() of the float, except that large positive values
// switch to Go-style exponents ("5.106151424e+09").
func formatPython(v float64) string {
	if sp, ok := special(v, "NaN"); ok {
		return sp
	}
	s := pythonRepr(v)
	dot := strings.IndexByte(s, '.')
	if v > 0 && dot > 6 {
		mantissa := strings.TrimRight(s[:1]+"."+s[1:dot]+s[dot+1:], "0.")
		return mantissa + "e+0" + strconv.Itoa(dot-1)
	}
	return s
}

// pythonRepr is Python's shortest round-trip repr of a float: scientific
// notation when the decimal exponent is below -4 or at least 16, otherwise
// positional with at least one digit after the point.
func pythonRepr(v float64) string {
	e := strconv.FormatFloat(v, 'e', -1, 64)
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if v != 0 && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// formatRust spells a float like Rust's Display for f64, which
// metrics-exporter-prometheus (TGI) uses: shortest round trip, never an
// exponent, no ".0" on whole numbers.
func formatRust(v float64) string {
	if sp, ok := special(v, "NaN"); ok {
		return sp
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// formatGo spells a float like client_golang's text encoder
// (strconv.FormatFloat 'g', shortest): "0.005", "3600", "1e+06".
func formatGo(v float64) string {
	if sp, ok := special(v, "NaN"); ok {
		return sp
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// formatCpp spells a float like prometheus-cpp (Triton), which uses
// std::to_chars: the shorter of positional and scientific, positional on a tie.
func formatCpp(v float64) string {
	if sp, ok := special(v, "Nan"); ok {
		return sp
	}
	f := strconv.FormatFloat(v, 'f', -1, 64)
	e := strconv.FormatFloat(v, 'e', -1, 64)
	if len(e) < len(f) {
		return e
	}
	return f
}
