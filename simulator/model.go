package simulator

import (
	"math"
	"math/rand/v2"
	"time"
)

// request is one finished request with everything the servers' metrics
// derive from it.
type request struct {
	prompt    float64 // prompt tokens
	cached    float64 // prompt tokens served from the prefix cache
	gen       float64 // generated tokens
	maxTokens float64 // the max_tokens parameter
	reason    string  // stop, length, abort, error
	ttft      float64 // seconds
	queue     float64 // waiting phase
	prefill   float64 // prefill phase
	decode    float64 // decode phase
	itl       float64 // mean inter-token latency of this request
	e2e       float64
	handler   string // OpenAI endpoint
	status    string // grouped HTTP status: 2xx, 4xx, 5xx
	rejected  bool   // answered 4xx/5xx before reaching the engine (validation, overload)
}

// step is what happened during one simulated interval.
type step struct {
	now         time.Time // end of the interval
	dt          float64   // seconds
	cond        conditions
	state       state
	arrivals    int
	preemptions int
	finished    []request
	iterations  float64 // engine steps in the interval
}

// state is the server's gauges, following the scenario's targets.
type state struct {
	running, waiting float64
	kv, cpuKV        float64
	swapped          float64
	prefixHit        float64
}

// model holds the lagged state and the random source.
type model struct {
	rng         *rand.Rand
	maxModelLen float64
	st          state
	primed      bool
}

func newModel(seed uint64, maxModelLen int) *model {
	return &model{
		rng:         rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		maxModelLen: float64(maxModelLen),
	}
}

// lag is the time constant with which gauges follow their targets.
const lag = 5.0

// advance runs one interval of dt seconds under conditions c.
func (m *model) advance(now time.Time, dt float64, c conditions) step {
	target := state{running: c.running, waiting: c.waiting, kv: c.kv, cpuKV: c.cpuKV, swapped: c.swapped, prefixHit: c.prefixHit}
	if !m.primed {
		m.st, m.primed = target, true
	}
	a := 1 - math.Exp(-dt/lag)
	m.st.running += (target.running - m.st.running) * a
	m.st.waiting += (target.waiting - m.st.waiting) * a
	m.st.kv += (target.kv - m.st.kv) * a
	m.st.cpuKV += (target.cpuKV - m.st.cpuKV) * a
	m.st.swapped += (target.swapped - m.st.swapped) * a
	m.st.prefixHit += (target.prefixHit - m.st.prefixHit) * a

	s := step{now: now, dt: dt, cond: c}
	// Exposed gauges carry a little noise; counts are whole numbers.
	s.state = state{
		running:   math.Max(0, math.Round(m.st.running*(1+0.05*m.rng.NormFloat64()))),
		waiting:   math.Max(0, math.Round(m.st.waiting*(1+0.05*m.rng.NormFloat64()))),
		kv:        clamp(m.st.kv+0.004*m.rng.NormFloat64(), 0, 1),
		cpuKV:     clamp(m.st.cpuKV+0.002*m.rng.NormFloat64(), 0, 1),
		swapped:   math.Max(0, math.Round(m.st.swapped)),
		prefixHit: clamp(m.st.prefixHit, 0, 1),
	}
	if m.st.cpuKV < 0.001 {
		s.state.cpuKV = 0
	}
	s.arrivals = m.poisson(c.rate * dt)
	s.preemptions = m.poisson(c.preemptRate * dt)
	finish := c.finishRate
	if finish == 0 {
		finish = c.rate
	}
	n := m.poisson(finish * dt)
	s.finished = make([]request, 0, n)
	for range n {
		s.finished = append(s.finished, m.request(c))
	}
	if c.itl > 0 && s.state.running > 0 && !c.hung {
		s.iterations = math.Round(dt / c.itl)
	}
	return s
}

func (m *model) request(c conditions) request {
	r := request{handler: "/v1/chat/completions", status: "2xx"}
	if m.rng.Float64() < 0.2 {
		r.handler = "/v1/completions"
	}
	r.prompt = clamp(math.Round(m.lognormal(c.promptMean, 0.6)), 1, m.maxModelLen-1)
	r.cached = math.Floor(r.prompt * clamp(c.prefixHit+0.1*m.rng.NormFloat64(), 0, 1))
	r.maxTokens = min([]float64{256, 512, 1024, 2048}[m.rng.IntN(4)], m.maxModelLen-r.prompt)
	r.gen = clamp(math.Round(m.lognormal(c.genMean, 0.7)), 1, math.Max(1, r.maxTokens))
	u := m.rng.Float64()
	switch {
	case u < c.errorFrac:
		r.reason = "error"
		r.gen = math.Ceil(r.gen * m.rng.Float64() * 0.2)
	case u < c.errorFrac+c.abortFrac:
		r.reason = "abort"
		r.gen = math.Ceil(r.gen * m.rng.Float64())
	case r.gen >= r.maxTokens:
		r.reason = "length"
	default:
		r.reason = "stop"
	}
	switch {
	case m.rng.Float64() < c.http5xx:
		r.status, r.rejected = "5xx", true // overloaded or failing front end
	case m.rng.Float64() < 0.003:
		r.status, r.rejected = "4xx", true // validation
	case r.reason == "error" && m.rng.Float64() < 0.5:
		// A failed non-streaming request is a 5xx; a streamed one already
		// sent 200 before it failed.
		r.status = "5xx"
	}
	sigma := c.ttftSigma
	if sigma == 0 {
		sigma = 0.45
	}
	r.ttft = m.lognormal(c.ttft, sigma)
	qshare := clamp(c.waiting/(c.waiting+5), 0.02, 0.9)
	r.queue = r.ttft * qshare
	r.prefill = r.ttft - r.queue
	r.itl = m.lognormal(c.itl, 0.2)
	r.decode = r.itl * math.Max(0, r.gen-1)
	r.e2e = r.ttft + r.decode
	return r
}

// lognormal draws with the given median and log-space sigma.
func (m *model) lognormal(median, sigma float64) float64 {
	if median <= 0 {
		return 0
	}
	return median * math.Exp(sigma*m.rng.NormFloat64())
}

// poisson draws a Poisson count: exact for small means, normal
// approximation above.
func (m *model) poisson(mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		return int(math.Max(0, math.Round(mean+math.Sqrt(mean)*m.rng.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), 0, 1.0
	for {
		p *= m.rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }
