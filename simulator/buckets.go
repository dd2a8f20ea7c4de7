package simulator

// Bucket layouts, from the metric catalogue
// (../shared/fixtures/metrics/catalog.yaml, bucket_sets).
var (
	vllmV1TTFT    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	vllmV1ITL     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	vllmV1Latency = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	vllmV0TTFT    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0}
	vllmV0TPOT    = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5}
	vllmV0Latency = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0}
	vllmIteration = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
	vllmParamsN   = []float64{1, 2, 5, 10, 20}

	sglangTTFT    = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITL     = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000}
	sglangE2E     = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	sglangQueue   = []float64{0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	tritonFirstMS = []float64{100, 500, 2000, 5000}

	fastapiHighR = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 7.5, 10, 30, 60}
	fastapiLowR  = []float64{0.1, 0.5, 1}
)

// buckets125 is vLLM's build_1_2_5_buckets: 1, 2, 5, 10, 20, 50, ... up
// to and including max.
func buckets125(max int) []float64 {
	var out []float64
	for exp := 1; ; exp *= 10 {
		for _, m := range []int{1, 2, 5} {
			v := m * exp
			if v > max {
				return out
			}
			out = append(out, float64(v))
		}
	}
}

// exponential returns n bounds start, start·factor, ... computed by
// repeated multiplication (SGLang's per-stage latency buckets).
func exponential(start, factor float64, n int) []float64 {
	out := make([]float64, n)
	v := start
	for i := range out {
		out[i] = v
		v *= factor
	}
	return out
}

// tgiDurationBuckets are TGI's 35 duration bounds: 0.0001 multiplied by 1.5
// before each push, so the first bound is 0.00015000000000000001.
func tgiDurationBuckets() []float64 {
	out := make([]float64, 0, 35)
	v := 0.0001
	for range 35 {
		v *= 1.5
		out = append(out, v)
	}
	return out
}

// tgiLinearBuckets are TGI's (max/100)·k bounds for k = 1..100.
func tgiLinearBuckets(max int) []float64 {
	out := make([]float64, 100)
	for i := range out {
		out[i] = float64(max) / 100 * float64(i+1)
	}
	return out
}

// tgiBatchSizeBuckets are 1..1024.
func tgiBatchSizeBuckets() []float64 {
	out := make([]float64, 1024)
	for i := range out {
		out[i] = float64(i + 1)
	}
	return out
}
