package engine

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/util/jsonutil"
)

// referenceDecode decodes a 200 answer the way client_golang's v1 API and
// the engine's previous conversion did: encoding/json into model types,
// then into a promql.Vector. ok is false when it cannot.
func referenceDecode(body []byte) (promql.Vector, bool) {
	var env struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Status != "success" {
		return nil, false
	}
	switch env.Data.ResultType {
	case "vector":
		var mv model.Vector
		if err := json.Unmarshal(env.Data.Result, &mv); err != nil {
			return nil, false
		}
		out := promql.Vector{}
		for _, s := range mv {
			b := labels.NewScratchBuilder(len(s.Metric))
			for n, v := range s.Metric {
				b.Add(string(n), string(v))
			}
			b.Sort()
			out = append(out, promql.Sample{Metric: b.Labels(), T: int64(s.Timestamp), F: float64(s.Value)})
		}
		return out, true
	case "scalar":
		var sc model.Scalar
		if err := json.Unmarshal(env.Data.Result, &sc); err != nil {
			return nil, false
		}
		return promql.Vector{{Metric: labels.EmptyLabels(), T: int64(sc.Timestamp), F: float64(sc.Value)}}, true
	}
	return nil, false
}

// encodeVector writes a vector as Prometheus answers with it.
func encodeVector(v promql.Vector) []byte {
	st := jsoniter.ConfigCompatibleWithStandardLibrary.BorrowStream(nil)
	defer jsoniter.ConfigCompatibleWithStandardLibrary.ReturnStream(st)
	st.WriteRaw(`{"status":"success","data":{"resultType":"vector","result":[`)
	for i, s := range v {
		if i > 0 {
			st.WriteMore()
		}
		m := model.Metric{}
		s.Metric.Range(func(l labels.Label) { m[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		st.WriteRaw(`{"metric":`)
		st.WriteVal(m)
		// The sample as Prometheus's API writes it: the timestamp's
		// exact digits (model.Time's JSON goes through a float64 and
		// loses the milliseconds of a large one).
		st.WriteRaw(`,"value":[`)
		jsonutil.MarshalTimestamp(s.T, st)
		st.WriteMore()
		jsonutil.MarshalFloat(s.F, st)
		st.WriteRaw(`]}`)
	}
	st.WriteRaw(`]}}`)
	if st.Error != nil {
		panic(st.Error)
	}
	return append([]byte(nil), st.Buffer()...)
}

func sameVector(a, b promql.Vector) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d samples, want %d", len(a), len(b))
	}
	for i := range a {
		if !labels.Equal(a[i].Metric, b[i].Metric) {
			return fmt.Errorf("sample %d: labels %s, want %s", i, a[i].Metric, b[i].Metric)
		}
		if a[i].T != b[i].T {
			return fmt.Errorf("sample %d: time %d, want %d", i, a[i].T, b[i].T)
		}
		if math.Float64bits(a[i].F) != math.Float64bits(b[i].F) && !(math.IsNaN(a[i].F) && math.IsNaN(b[i].F)) {
			return fmt.Errorf("sample %d: value %v, want %v", i, a[i].F, b[i].F)
		}
	}
	return nil
}

var oddStrings = []string{
	"", "a", "vllm", "meta-llama/Llama-3.1-8B-Instruct", `quo"te`, `back\slash`, "new\nline",
	"tab\t", "ünïcödé", "日本語", "emoji 🚀", "\u2028", "<html>&amp;", "{{ $labels.x }}", "\x01ctl",
}

var oddValues = []float64{0, 1, -1, 0.25, 1e-300, 1e300, -0.0, math.Inf(1), math.Inf(-1), math.NaN(), 123456789.123456789, 5e-324}

// randomVector encodes a random vector with model's own JSON encoding,
// the shape Prometheus answers with.
func randomVector(rng *rand.Rand) []byte {
	n := rng.IntN(6)
	v := make(model.Vector, 0, n)
	for range n {
		m := model.Metric{}
		for range rng.IntN(5) {
			name := oddStrings[rng.IntN(len(oddStrings))]
			if name == "" {
				name = "job"
			}
			m[model.LabelName(name)] = model.LabelValue(oddStrings[rng.IntN(len(oddStrings))])
		}
		s := &model.Sample{Metric: m, Timestamp: model.Time(rng.Int64N(2e12)), Value: model.SampleValue(oddValues[rng.IntN(len(oddValues))])}
		if rng.IntN(8) == 0 {
			s.Value = 0
			s.Histogram = &model.SampleHistogram{Count: 3, Sum: 1.5, Buckets: model.HistogramBuckets{{Boundaries: 1, Lower: 0, Upper: 1, Count: 3}}}
		}
		v = append(v, s)
	}
	res, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return []byte(`{"status":"success","data":{"resultType":"vector","result":` + string(res) + `},"warnings":["w"]}`)
}

// TestDecodeQueryResponseMatchesClientGolang: on random vectors with odd
// label names and values, NaN, infinities and histograms, the decoder
// gives what client_golang's decoding gave.
func TestDecodeQueryResponseMatchesClientGolang(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		body := randomVector(rng)
		want, ok := referenceDecode(body)
		if !ok {
			t.Fatalf("reference cannot decode %s", body)
		}
		got, err := queryResult(200, body)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, body)
		}
		if err := sameVector(got, want); err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, body)
		}
	}
}

func TestDecodeQueryResponseShapes(t *testing.T) {
	cases := []struct {
		name, body string
		want       promql.Vector
		err        string
	}{
		{"empty vector", `{"status":"success","data":{"resultType":"vector","result":[]}}`, promql.Vector{}, ""},
		{"result before type", `{"data":{"result":[{"value":[1.5,"2"],"metric":{"b":"1","a":"2"}}],"resultType":"vector"},"status":"success"}`,
			promql.Vector{{Metric: labels.FromStrings("a", "2", "b", "1"), T: 1500, F: 2}}, ""},
		{"scalar", `{"status":"success","data":{"resultType":"scalar","result":[1700000000.123,"-Inf"]}}`,
			promql.Vector{{Metric: labels.EmptyLabels(), T: 1700000000123, F: math.Inf(-1)}}, ""},
		{"unknown fields", `{"status":"success","infos":["x"],"data":{"resultType":"vector","extra":{"a":[1,2]},"result":[{"metric":{},"value":[0,"1"],"x":null}]}}`,
			promql.Vector{{Metric: labels.EmptyLabels(), F: 1}}, ""},
		{"escaped label name", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a\"b\u00e9":"v\\1"},"value":[0,"1"]}]}}`,
			promql.Vector{{Metric: labels.FromStrings(`a"bé`, `v\1`), F: 1}}, ""},
		{"matrix", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[0,"1"]]}]}}`, nil, "rule result is a matrix"},
		{"string", `{"status":"success","data":{"resultType":"string","result":[0,"hello"]}}`, nil, "rule result is a string"},
		{"no data", `{"status":"success"}`, nil, "empty result"},
		{"bad value", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[0,"one"]}]}}`, nil, "bad_response"},
		{"value not a pair", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[0,"1",2]}]}}`, nil, "bad_response"},
		{"value a number", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[0,1]}]}}`, nil, "bad_response"},
		{"label value a number", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[0,"1"]}]}}`, nil, "bad_response"},
		{"truncated", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"val`, nil, "bad_response"},
		{"trailing data", `{"status":"success","data":{"resultType":"vector","result":[]}} {}`, nil, "bad_response"},
		{"not an object", `[1,2]`, nil, "bad_response"},
		{"error in a 200", `{"status":"error","errorType":"execution","error":"boom"}`, nil, "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := queryResult(200, []byte(c.body))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q (result %v)", err, c.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := sameVector(got, c.want); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// FuzzDecodeQueryResponse: any body is decoded without a panic, and what
// client_golang's decoding reads, written as Prometheus writes it, the
// decoder reads the same. (On bodies Prometheus never sends, client_golang
// is laxer: it matches keys in any case, and takes a sample without a
// value as 0.)
func FuzzDecodeQueryResponse(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 8 {
		f.Add(randomVector(rng))
	}
	f.Add([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1,"NaN"]}}`))
	f.Add([]byte(`{"status":"error","errorType":"bad_data","error":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = queryResult(200, body)
		want, ok := referenceDecode(body)
		if !ok {
			return
		}
		canon := encodeVector(want)
		got, err := queryResult(200, canon)
		if err != nil {
			t.Fatalf("client_golang reads %q, the decoder fails on it as Prometheus writes it (%s): %v", body, canon, err)
		}
		if err := sameVector(got, want); err != nil {
			t.Fatalf("%s: %v", canon, err)
		}
	})
}
