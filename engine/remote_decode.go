package engine

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
)

// The rule engine sends one instant query per rule per evaluation, and
// decoding the answers was a quarter of its CPU with client_golang's v1
// API: the envelope is parsed with encoding/json, the result again with
// json-iterator, every sample a third time, into a map per label set that
// is then copied into labels.Labels. decodeQueryResponse reads the answer
// once, with json-iterator's streaming iterator, straight into a
// promql.Vector. The request, its transport (auth, TLS) and the status
// code handling stay client_golang's and prometheus/common's.

// queryResponse is the part of a /api/v1/query answer the engine uses.
type queryResponse struct {
	status     string
	errorType  string
	errorMsg   string
	resultType string
	vector     promql.Vector

	// A scalar or string result is a pair: [time, "value"].
	isPair    bool
	pairTime  int64
	pairValue string
}

var decodeConfig = jsoniter.Config{}.Froze()

// decodeQueryResponse parses the body of a /api/v1/query answer.
// Histogram samples are read as 0, as client_golang's model would (their
// float value), since alerting rules compare floats.
func decodeQueryResponse(body []byte) (*queryResponse, error) {
	it := decodeConfig.BorrowIterator(body)
	defer decodeConfig.ReturnIterator(it)
	r := &queryResponse{}
	if it.WhatIsNext() != jsoniter.ObjectValue {
		return nil, errors.New("response is not a JSON object")
	}
	it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
		switch field {
		case "status":
			r.status = readString(it)
		case "errorType":
			r.errorType = readString(it)
		case "error":
			r.errorMsg = readString(it)
		case "data":
			r.readData(it)
		default:
			it.Skip()
		}
		return it.Error == nil
	})
	if it.Error != nil && it.Error != io.EOF {
		return nil, it.Error
	}
	// Nothing may follow the object but white space.
	if it.WhatIsNext() != jsoniter.InvalidValue || (it.Error != nil && it.Error != io.EOF) {
		return nil, errors.New("data after the response object")
	}
	return r, nil
}

// readString reads a string, or null as "".
func readString(it *jsoniter.Iterator) string {
	if it.WhatIsNext() == jsoniter.NilValue {
		it.ReadNil()
		return ""
	}
	if it.WhatIsNext() != jsoniter.StringValue {
		it.ReportError("decode", "want a string")
		return ""
	}
	return it.ReadString()
}

func (r *queryResponse) readData(it *jsoniter.Iterator) {
	if it.WhatIsNext() == jsoniter.NilValue {
		it.ReadNil()
		return
	}
	it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
		switch field {
		case "resultType":
			r.resultType = readString(it)
		case "result":
			r.readResult(it)
		default:
			it.Skip()
		}
		return it.Error == nil
	})
}

// readResult reads a vector (an array of objects) or a scalar or string
// (a [time, "value"] pair); anything else is skipped and reported by its
// resultType.
func (r *queryResponse) readResult(it *jsoniter.Iterator) {
	if it.WhatIsNext() != jsoniter.ArrayValue {
		it.Skip()
		return
	}
	n := 0
	var b labels.ScratchBuilder
	it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
		switch it.WhatIsNext() {
		case jsoniter.ObjectValue:
			if s, ok := readSample(it, &b); ok {
				r.vector = append(r.vector, s)
			}
		case jsoniter.NumberValue:
			if n != 0 {
				it.ReportError("decode", "result is not a [time, value] pair")
				return false
			}
			r.isPair = true
			r.pairTime = readTime(it)
		case jsoniter.StringValue:
			if !r.isPair || n != 1 {
				it.ReportError("decode", "result is not a [time, value] pair")
				return false
			}
			r.pairValue = it.ReadString()
		default:
			it.Skip()
		}
		n++
		return it.Error == nil
	})
}

// sample returns a scalar result as a sample without labels.
func (r *queryResponse) sample() (promql.Sample, error) {
	if !r.isPair {
		return promql.Sample{}, errors.New("scalar result is not a [time, value] pair")
	}
	f, err := strconv.ParseFloat(r.pairValue, 64)
	if err != nil {
		return promql.Sample{}, fmt.Errorf("scalar value %q is not a number", r.pairValue)
	}
	return promql.Sample{Metric: labels.EmptyLabels(), T: r.pairTime, F: f}, nil
}

// readSample reads {"metric": {...}, "value": [t, "v"]} (or "histogram").
func readSample(it *jsoniter.Iterator, b *labels.ScratchBuilder) (promql.Sample, bool) {
	var s promql.Sample
	b.Reset()
	ok := false
	it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
		switch field {
		case "metric":
			if it.WhatIsNext() != jsoniter.ObjectValue {
				it.ReportError("decode", "metric is not an object")
				return false
			}
			it.ReadMapCB(func(it *jsoniter.Iterator, name string) bool {
				b.Add(name, readString(it))
				return it.Error == nil
			})
		case "value", "histogram":
			if it.WhatIsNext() != jsoniter.ArrayValue {
				it.ReportError("decode", field+" is not a [time, value] pair")
				return false
			}
			n := 0
			it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
				switch n {
				case 0:
					s.T = readTime(it)
				case 1:
					if field == "value" {
						s.F = readValue(it)
					} else {
						it.Skip() // a native histogram: its float value is 0
					}
				default:
					it.ReportError("decode", field+" has more than two elements")
				}
				n++
				return it.Error == nil
			})
			if n != 2 && it.Error == nil {
				it.ReportError("decode", field+" is not a [time, value] pair")
			}
			ok = true
		case "values", "histograms":
			it.Skip() // a range vector: reported by its resultType
			ok = true
		default:
			it.Skip()
		}
		return it.Error == nil
	})
	if !ok && it.Error == nil {
		it.ReportError("decode", "sample has no value")
	}
	b.Sort()
	s.Metric = b.Labels()
	return s, ok && it.Error == nil
}

// readTime reads a timestamp in seconds (a JSON number) as milliseconds,
// from its digits as client_golang does (model.Time), not through a
// float64, which loses the milliseconds of a large timestamp.
func readTime(it *jsoniter.Iterator) int64 {
	if it.WhatIsNext() != jsoniter.NumberValue {
		it.ReportError("decode", "timestamp is not a number")
		return 0
	}
	n := it.ReadNumber()
	var t model.Time
	if err := t.UnmarshalJSON([]byte(n)); err != nil {
		it.ReportError("decode", fmt.Sprintf("timestamp %s: %v", n, err))
		return 0
	}
	return int64(t)
}

// readValue reads a sample value: a string holding a float, NaN or ±Inf.
func readValue(it *jsoniter.Iterator) float64 {
	if it.WhatIsNext() != jsoniter.StringValue {
		it.ReportError("decode", "value is not a string")
		return 0
	}
	s := it.ReadString()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		it.ReportError("decode", fmt.Sprintf("value %q is not a number", s))
		return 0
	}
	return f
}
