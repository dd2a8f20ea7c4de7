package simulator

import "time"

// tgi exposes text-generation-inference's router metrics
// (metrics-exporter-prometheus): no model label, counters without _total,
// failure and concat series only once they happened, and
// tgi_request_skipped_tokens as a summary because it has no buckets.
type tgi struct {
	m     *model
	start time.Time
	list  familyList

	maxInput, maxTotal float64
	// failedBatches carries the fraction of a failed batch: a shard error
	// discards the whole running batch, so its requests fail together.
	failedBatches float64

	success, concat, count, failure, inferSuccess, inferCount, inferFailure *family
	queueSize, maxTokens, batchSize, batchMaxTotal                          *family
	inputLength, maxNewTokens, inferenceDur, skipped, forwardDur            *family
	duration, validationDur, queueDur, filterDur, batchInferDur, meanTPT    *family
	concatDur, generated, decodeDur, nextSize                               *family
}

func newTGI(opts Options, m *model) *tgi {
	t := &tgi{m: m, start: opts.Start, maxInput: float64(opts.MaxModelLen - 1), maxTotal: float64(opts.MaxModelLen)}
	l := &t.list
	dur := tgiDurationBuckets()
	t.success = l.counter("tgi_request_success", "Number of successful requests")
	t.concat = l.counter("tgi_batch_concat", "", "reason")
	t.count = l.counter("tgi_request_count", "Total number of requests")
	t.failure = l.counter("tgi_request_failure", "", "err")
	t.inferSuccess = l.counter("tgi_batch_inference_success", "Number of successful inference calls per method (prefill or decode)", "method")
	t.inferCount = l.counter("tgi_batch_inference_count", "Inference calls per method (prefill or decode)", "method")
	t.inferFailure = l.counter("tgi_batch_inference_failure", "", "method")
	t.queueSize = l.gauge("tgi_queue_size", "Current queue size")
	t.maxTokens = l.gauge("tgi_batch_current_max_tokens", "Maximum tokens for the current batch")
	t.batchSize = l.gauge("tgi_batch_current_size", "Current batch size")
	t.batchMaxTotal = l.gauge("tgi_batch_max_total_tokens", "")
	t.inputLength = l.histogram("tgi_request_input_length", "Input token length per request", tgiLinearBuckets(opts.MaxModelLen-1))
	t.maxNewTokens = l.histogram("tgi_request_max_new_tokens", "Maximum new tokens per request", tgiLinearBuckets(opts.MaxModelLen))
	t.inferenceDur = l.histogram("tgi_request_inference_duration", "Request inference duration", dur)
	t.skipped = l.summary("tgi_request_skipped_tokens", "Speculated tokens per request", []float64{0, 0.5, 0.9, 0.95, 0.99, 0.999, 1})
	t.forwardDur = l.histogram("tgi_batch_forward_duration", "Batch forward duration per method (prefill or decode)", dur, "method")
	t.duration = l.histogram("tgi_request_duration", "Request duration", dur)
	t.validationDur = l.histogram("tgi_request_validation_duration", "Request validation duration", dur)
	t.queueDur = l.histogram("tgi_request_queue_duration", "Request queue duration", dur)
	t.filterDur = l.histogram("tgi_batch_filter_duration", "Time spent filtering batches and sending generated tokens per method (prefill or decode)", dur, "method")
	t.batchInferDur = l.histogram("tgi_batch_inference_duration", "Batch inference duration", dur, "method")
	t.meanTPT = l.histogram("tgi_request_mean_time_per_token_duration", "Mean time per token per request", dur)
	t.concatDur = l.histogram("tgi_batch_concat_duration", "", dur, "method")
	t.generated = l.histogram("tgi_request_generated_tokens", "Generated tokens per request", tgiLinearBuckets(opts.MaxModelLen))
	t.decodeDur = l.histogram("tgi_batch_decode_duration", "Time spent decoding a batch per method (prefill or decode)", dur, "method")
	t.nextSize = l.histogram("tgi_batch_next_size", "Batch size of the next batch", tgiBatchSizeBuckets())
	// Set once after warmup.
	t.batchMaxTotal.with(opts.Start).value = 16000
	return t
}

func (t *tgi) families() []*family { return t.list.list }

func (t *tgi) exposition() exposition { return exposition{style: styleRust, format: formatRust} }

func (t *tgi) record(s *step) {
	at := t.start
	t.queueSize.with(at).value = s.state.waiting
	t.batchSize.with(at).value = s.state.running
	t.maxTokens.with(at).value = float64(int(s.state.kv * t.batchMaxTotal.with(at).value))
	// The router counts a request when it arrives (router/src/server.rs,
	// before validation), whether or not it ever finishes.
	t.count.with(at).value += float64(s.arrivals)
	for _, r := range s.finished {
		obs := func(f *family, x float64) { f.observe(f.with(at), x, 1) }
		switch {
		case r.rejected && r.status == "4xx":
			t.failure.with(s.now, "validation").value++
			obs(t.validationDur, 0.0002)
			continue
		case r.rejected:
			t.failure.with(s.now, "overloaded").value++
			continue
		case r.reason == "error":
			t.failure.with(s.now, "generation").value++
			t.failedBatches += 1 / max(1, s.state.running)
			if t.failedBatches >= 1 {
				t.inferFailure.with(s.now, "decode").value++
				t.inferCount.with(at, "decode").value++
				t.failedBatches--
			}
		case r.reason == "abort":
			t.failure.with(s.now, "incomplete").value++
		default:
			t.success.with(at).value++
		}
		obs(t.validationDur, 0.0002*t.m.lognormal(1, 0.3))
		obs(t.queueDur, r.queue)
		obs(t.inferenceDur, r.prefill+r.decode)
		obs(t.duration, r.e2e)
		obs(t.meanTPT, r.itl)
		obs(t.inputLength, min(r.prompt, t.maxInput))
		obs(t.maxNewTokens, r.maxTokens)
		obs(t.generated, r.gen)
		t.skipped.observe(t.skipped.with(at), 0, uint64(r.gen))
	}
	if s.iterations > 0 {
		prefills := float64(len(s.finished))
		decodes := s.iterations
		for i, method := range []string{"prefill", "decode"} {
			n := []float64{prefills, decodes}[i]
			if n == 0 {
				continue
			}
			t.inferCount.with(at, method).value += n
			t.inferSuccess.with(at, method).value += n
			base := s.cond.itl
			if method == "prefill" {
				base = 0.08
			}
			t.forwardDur.observe(t.forwardDur.with(at, method), t.m.lognormal(base*0.95, 0.2), uint64(n))
			t.batchInferDur.observe(t.batchInferDur.with(at, method), t.m.lognormal(base, 0.2), uint64(n))
			t.decodeDur.observe(t.decodeDur.with(at, method), t.m.lognormal(base*0.002, 0.3), uint64(n))
			t.filterDur.observe(t.filterDur.with(at, method), t.m.lognormal(0.0003, 0.3), uint64(n))
		}
		if prefills > 0 {
			t.nextSize.observe(t.nextSize.with(at), max(1, prefills), 1)
			if s.state.waiting > 0 || t.m.rng.Float64() < 0.05 {
				t.concat.with(s.now, "chunking").value++
				t.concatDur.observe(t.concatDur.with(s.now, "decode"), t.m.lognormal(0.0015, 0.3), 1)
			}
		}
	}
}
