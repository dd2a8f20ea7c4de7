package simulator

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/pagedhq/paged/rules/catalog"
)

// Server is the kind of server simulated.
type Server string

const (
	ServerVLLM   Server = "vllm"    // vLLM with the V1 engine (current releases)
	ServerVLLMV0 Server = "vllm-v0" // vLLM with the legacy V0 engine (about 0.7)
	ServerTGI    Server = "tgi"     // Hugging Face text-generation-inference v3
	ServerSGLang Server = "sglang"  // SGLang
	ServerTriton Server = "triton"  // NVIDIA Triton Inference Server
	ServerDCGM   Server = "dcgm"    // NVIDIA dcgm-exporter on a node of four GPUs
	// ServerGateway is an inference gateway's endpoint picker (Gateway
	// API Inference Extension EPP, llm-d's scheduler with KVConnector)
	// in front of a pool of model servers.
	ServerGateway Server = "inference-gateway"
)

// Servers lists every server kind.
func Servers() []Server {
	return []Server{ServerVLLM, ServerVLLMV0, ServerTGI, ServerSGLang, ServerTriton, ServerDCGM, ServerGateway}
}

// inferenceServers are the servers that run the model; dcgm-exporter only
// watches the GPUs under them.
var inferenceServers = []Server{ServerVLLM, ServerVLLMV0, ServerTGI, ServerSGLang, ServerTriton, ServerGateway}

// Options configure a Simulator. Zero values take the defaults noted.
type Options struct {
	Server   Server // default vllm
	Scenario string // default steady
	Seed     uint64 // random seed; the same seed gives the same output
	// Speed compresses time: with Speed 10 one wall second is ten simulated
	// seconds. Default 1.
	Speed float64
	// Model is the model_name label (model label on Triton).
	// Default meta-llama/Llama-3.1-8B-Instruct.
	Model string
	// MaxModelLen sets the token-count bucket layouts (vLLM's 1-2-5 buckets,
	// TGI's input and total-token buckets). Default 8192.
	MaxModelLen int
	// Now is the clock, read once per scrape or scenario change.
	// Default time.Now.
	Now func() time.Time
	// Start is when the simulated server started. Default Now().
	Start time.Time
	// Logger gets scenario changes; nil discards.
	Logger *slog.Logger
	// Version is the server release to imitate ("0.10"), for vllm,
	// vllm-v0 and inference-gateway (a GAIE release, "1.1"): only the metrics that release exposes by default are
	// served, following the catalogue's versions as data
	// (rules/catalog/additions.yaml), and a V1 release before 0.14 also
	// serves vllm:time_per_output_token_seconds. Empty: the newest names
	// (V1) or about 0.7 (V0), every metric the simulator knows.
	Version string
	// SpecDecode serves the speculative-decoding metrics, as a server
	// started with a speculative config (vLLM: --speculative-config; the
	// SGLang gauges exist always but stay 0 without it).
	SpecDecode bool
	// KVConnector makes the server a P/D decode worker with a KV
	// connector: vLLM serves the NIXL connector's counters, SGLang counts
	// transfer failures; the inference gateway becomes llm-d's scheduler
	// with P/D disaggregation and counts its decisions (GAIE 1.2+).
	KVConnector bool
	// FlowControl turns on the inference gateway's flow control (GAIE
	// 1.5+): the endpoint picker exports its pool saturation
	// (inference_extension_flow_control_pool_saturation).
	FlowControl bool
	// PrefillWorker makes an SGLang server with KVConnector the prefill
	// worker of the P/D pair instead of the decode worker: it observes the
	// KV bootstrap handshake (sglang:kv_transfer_bootstrap_ms) and counts
	// optimistic prefill retries, and its decode queues stay 0.
	PrefillWorker bool
	// NaNCheck serves, on vllm, vllm:corrupted_requests_total, as a server
	// started with VLLM_COMPUTE_NANS_IN_LOGITS=1 (the only way vLLM counts
	// requests with NaN logits, PR #27306).
	NaNCheck bool
	// DCGMOptIn serves, on dcgm, the counters that dcgm-exporter's
	// default-counters.csv comments out and the dcgm pack alerts on:
	// DCGM_FI_DEV_THERMAL_VIOLATION and DCGM_FI_DEV_POWER_VIOLATION (ns)
	// the ECC counts (DCGM_FI_DEV_ECC_{SBE,DBE}_{VOL,AGG}_TOTAL), the
	// exporter's DCGM_EXP_XID_ERRORS_COUNT and DCGM_EXP_GPU_HEALTH_STATUS,
	// and the NVLink error counters, as a counters file (-f) that
	// uncomments them would.
	DCGMOptIn bool
}

// has reports whether the option a scenario needs is on.
func (o *Options) has(f feature) bool {
	switch f {
	case featureSpecDecode:
		return o.SpecDecode
	case featureKVConnector:
		return o.KVConnector
	case featureDCGMOptIn:
		return o.DCGMOptIn
	case featureNaNCheck:
		return o.NaNCheck
	case featureFlowControl:
		return o.FlowControl
	case featurePrefillWorker:
		return o.KVConnector && o.PrefillWorker
	}
	return true
}

func (o *Options) fill() error {
	if o.Server == "" {
		o.Server = ServerVLLM
	}
	known := false
	for _, s := range Servers() {
		known = known || s == o.Server
	}
	if !known {
		return fmt.Errorf("unknown server %q (valid: %s)", o.Server, joinServers())
	}
	if o.Scenario == "" {
		o.Scenario = "steady"
	}
	if o.Speed == 0 {
		o.Speed = 1
	}
	if o.Speed < 0 || o.Speed > 1e6 {
		return fmt.Errorf("speed %v out of range (0, 1e6]", o.Speed)
	}
	if o.Model == "" {
		o.Model = "meta-llama/Llama-3.1-8B-Instruct"
	}
	if o.MaxModelLen == 0 {
		o.MaxModelLen = 8192
	}
	if o.MaxModelLen < 16 || o.MaxModelLen > 10_000_000 {
		return fmt.Errorf("max model length %d out of range [16, 10000000]", o.MaxModelLen)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Start.IsZero() {
		o.Start = o.Now()
	}
	if o.Version != "" {
		rels := catalog.Default().Releases(string(o.Server))
		if !slices.Contains(rels, o.Version) {
			return fmt.Errorf("version %q of %s not known (known: %s)", o.Version, o.Server, strings.Join(rels, ", "))
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

func joinServers() string {
	var names []string
	for _, s := range Servers() {
		names = append(names, string(s))
	}
	return strings.Join(names, ", ")
}
