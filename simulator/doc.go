// Package simulator is a stand-in LLM inference server for tests, demos and
// benchmarks. It serves /metrics with the names, types, labels, buckets and
// HELP strings of vLLM (V1 and the legacy V0 engine), TGI, SGLang, Triton and
// an inference gateway's endpoint picker (Gateway API Inference Extension,
// llm-d), as recorded in the metric catalogue, and moves them over simulated
// time according to a scenario (steady load, KV-cache saturation, a TTFT
// spike, an error burst, ...).
//
// A Simulator owns its metric state and a seeded random source: the same
// options, seed and sequence of scrape times give the same output. Time is
// read from an injectable clock once per scrape, so tests drive it without
// sleeping. Several simulators can share one process (for example fifty of
// them behind one listener for a benchmark).
package simulator
