package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/pagedhq/paged/simulator"
)

// simulateCmd serves the /metrics of one or more simulated LLM inference
// servers.
type simulateCmd struct {
	Listen        string  `default:"127.0.0.1:8000" help:"Address to serve /metrics and /scenario on."`
	Server        string  `default:"vllm" enum:"vllm,vllm-v0,tgi,sglang,triton,dcgm,inference-gateway" help:"Server to imitate: ${enum} (dcgm: dcgm-exporter on a node of four GPUs)."`
	Scenario      string  `default:"steady" help:"Starting scenario: steady, ramp, kv-saturation, preemption-storm, swap (vllm-v0), ttft-spike, error-burst, fragmentation, overprovisioned, idle, asleep (vllm), hung (vllm, tgi, sglang), queue-full, requests-deferred (vllm), external-cache-miss (vllm with --kv-connector), nan-logits (vllm with --nan-check), spec-decode-collapse (with --spec-decode), kv-transfer-failures (with --kv-connector), pd-decode-bound and pd-prefill-bound (sglang with --kv-connector), prefill-retries and kv-bootstrap-slow (sglang with --kv-connector --prefill-worker), scheduler-stuck (sglang), grammar-backlog (sglang), no-ready-pods (inference-gateway), pd-stopped and stale-pod-metrics (inference-gateway with --kv-connector), down; dcgm: steady, ramp, idle, gpu-overheating, thermal-throttling (with --dcgm-opt-in), memory-pressure, xid-error, xid-hardware, row-remap-failure, pcie-replays, ecc-double-bit, nvlink-errors, xid-storm (with --dcgm-opt-in), down. Change it at runtime with POST /scenario."`
	SpecDecode    bool    `name:"spec-decode" help:"Serve the speculative-decoding metrics, as a server started with a speculative config."`
	KVConnector   bool    `name:"kv-connector" help:"Act as a P/D decode worker with a KV connector (vLLM: the NIXL counters; SGLang: transfer failures and the decode queues); on inference-gateway, llm-d's scheduler with P/D disaggregation (its decision counters)."`
	FlowControl   bool    `name:"flow-control" help:"inference-gateway: turn the endpoint picker's flow control on (its pool saturation gauge, GAIE 1.5+)."`
	PrefillWorker bool    `name:"prefill-worker" help:"SGLang with --kv-connector: act as the P/D prefill worker instead of the decode worker (KV bootstrap times, optimistic prefill retries)."`
	NaNCheck      bool    `name:"nan-check" help:"vLLM: serve vllm:corrupted_requests_total, as a server started with VLLM_COMPUTE_NANS_IN_LOGITS=1."`
	DCGMOptIn     bool    `name:"dcgm-opt-in" help:"dcgm: also serve the counters dcgm-exporter's default-counters.csv comments out that the dcgm pack uses (thermal and power violation in ns, ECC counts, the exporter's XID count and health status, NVLink error counters)."`
	Version       string  `name:"server-version" help:"Release to imitate (vllm: 0.9 ... 0.14, vllm-v0: 0.4 ... 0.10, inference-gateway: 0.3 ... 1.5): only the metrics it exposes by default. Empty: the newest names."`
	Seed          uint64  `default:"1" help:"Random seed; the same seed gives the same metrics."`
	Speed         float64 `default:"1" help:"Time compression: 10 runs ten simulated seconds per second."`
	Model         string  `default:"meta-llama/Llama-3.1-8B-Instruct" help:"Model name label."`
	MaxModelLen   int     `name:"max-model-len" default:"8192" help:"Context length; sets the token-count bucket layouts."`
	Count         int     `default:"1" help:"Number of servers, on consecutive ports from --listen's, seeds --seed, --seed+1, ... (for benchmarks)."`
}

func (c *simulateCmd) Run(e *env) error {
	if c.Count < 1 || c.Count > 1000 {
		return usageError("simulate: --count %d out of range [1, 1000]", c.Count)
	}
	host, portText, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return usageError("simulate: --listen %q: %w", c.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port+c.Count-1 > 65535 {
		return usageError("simulate: --listen %q: bad port for %d server(s)", c.Listen, c.Count)
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, nil))

	var servers []*http.Server
	var listeners []net.Listener
	defer func() {
		for _, ln := range listeners {
			ln.Close()
		}
	}()
	for i := range c.Count {
		sim, err := simulator.New(simulator.Options{
			Server:        simulator.Server(c.Server),
			Scenario:      c.Scenario,
			Seed:          c.Seed + uint64(i),
			Speed:         c.Speed,
			Model:         c.Model,
			MaxModelLen:   c.MaxModelLen,
			Version:       c.Version,
			SpecDecode:    c.SpecDecode,
			KVConnector:   c.KVConnector,
			DCGMOptIn:     c.DCGMOptIn,
			NaNCheck:      c.NaNCheck,
			PrefillWorker: c.PrefillWorker,
			FlowControl:   c.FlowControl,
			Logger:        logger.With("instance", i),
		})
		if err != nil {
			return usageError("simulate: %w", err)
		}
		p := port
		if port != 0 {
			p = port + i
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err != nil {
			return usageError("simulate: %w", err)
		}
		listeners = append(listeners, ln)
		servers = append(servers, &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second})
	}
	for i, ln := range listeners {
		fmt.Fprintf(e.stdout, "simulating %s (scenario %s, seed %d, speed %gx) on http://%s/metrics\n",
			c.Server, c.Scenario, c.Seed+uint64(i), c.Speed, ln.Addr())
	}
	fmt.Fprintf(e.stdout, "change scenario: curl -X POST 'http://%s/scenario?name=kv-saturation'\n", listeners[0].Addr())

	served := make(chan error, len(servers))
	for i, srv := range servers {
		go func() { served <- srv.Serve(listeners[i]) }()
	}
	var serveErr error
	received := 0
	select {
	case serveErr = <-served:
		received++
	case <-e.ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdownCtx)
	}
	// Wait for every Serve to return so no goroutine outlives the command.
	for ; received < len(servers); received++ {
		if err := <-served; serveErr == nil && !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return usageError("simulate: serve: %w", serveErr)
	}
	return nil
}
