package simulator

import (
	"math"
	"testing"
)

// The expected strings are copied from the real captures in
// ../shared/fixtures/metrics/.
func TestFormatPythonMatchesCaptures(t *testing.T) {
	for v, want := range map[float64]string{
		1.7181405583e9:         "1.7181405583e+09", // process_start_time_seconds, vLLM V0 capture
		1048576:                "1.048576e+06",     // process_max_fds
		6.634254336e9:          "6.634254336e+09",
		10.950000000000001:     "10.950000000000001",
		0.31326723098754883:    "0.31326723098754883",
		7.358146831393242e-05:  "7.358146831393242e-05",
		1:                      "1.0",
		0:                      "0.0",
		49:                     "49.0",
		120:                    "120.0",
		2560:                   "2560.0",
		8.128902e+06:           "8.128902e+06", // SGLang docs capture
		866964.5791549598:      "866964.5791549598",
		2.3518979474117756e+06: "2.3518979474117756e+06",
		math.Inf(1):            "+Inf",
		0.007507552643049313:   "0.007507552643049313",
		1e16:                   "1e+16",
	} {
		if got := formatPython(v); got != want {
			t.Errorf("formatPython(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestFormatRustMatchesTGICapture(t *testing.T) {
	dur := tgiDurationBuckets()
	in := tgiLinearBuckets(511)
	for _, c := range []struct {
		v    float64
		want string
	}{
		{dur[0], "0.00015000000000000001"},
		{dur[1], "0.00022500000000000002"},
		{dur[2], "0.0003375"},
		{in[2], "15.330000000000002"},
		{in[99], "511.00000000000006"},
		{tgiLinearBuckets(512)[99], "512"},
		{245.91743839099996, "245.91743839099996"},
		{109, "109"},
	} {
		if got := formatRust(c.v); got != c.want {
			t.Errorf("formatRust(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestFormatCpp(t *testing.T) {
	for v, want := range map[float64]string{100: "100", 1e6: "1e+06", 0.5: "0.5", 123456: "123456", 90072.7184470992: "90072.7184470992"} {
		if got := formatCpp(v); got != want {
			t.Errorf("formatCpp(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestBuckets125(t *testing.T) {
	got := formatBounds(buckets125(2048))
	if want := "[1 2 5 10 20 50 100 200 500 1000 2000]"; got != want {
		t.Errorf("buckets125(2048) = %s, want %s (the V0 capture's request_prompt_tokens)", got, want)
	}
}
