package simulator

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// dcgm exposes NVIDIA dcgm-exporter for one node of dcgmGPUs GPUs that
// serve the simulated model (tensor parallel): the fields of its
// etc/default-counters.csv (4.5.3-4.8.2) with their types and HELP texts,
// no _total suffix, and the label set of its text template: gpu, UUID,
// pci_bus_id, device, modelName, Hostname (renamed hostname after 4.8.2),
// the DCGM_FI_DRIVER_VERSION label field, and err_code/err_msg on
// DCGM_FI_DEV_XID_ERRORS. Options.DCGMOptIn adds the counters the default
// file comments out and the dcgm pack alerts on (the clock-throttle
// violations in nanoseconds, the ECC counts, the exporter's XID count and
// health status, the NVLink error counters), as a counters file that
// uncomments them would.
type dcgm struct {
	m     *model
	start time.Time
	list  familyList
	gpus  [][]string // label values per GPU, before err_code/err_msg
	optIn bool

	xid         []int     // last XID per GPU, 0 = none
	fbTotal     float64   // MiB per GPU
	replayAcc   []float64 // fractional PCIe replays carried over
	dbeAcc      []float64
	rowsAcc     []float64
	throttleAcc []float64 // fractional nanoseconds, to keep the counter whole
	xidAcc      []float64 // fractional XID events of a storm
	nvAcc       [][4]float64
	xidEvents   [][]xidEvent // per GPU, the XIDs of the exporter's count window

	smClock, memClock, memTemp, gpuTemp, power, energy, pcieReplay *family
	util, memCopy, enc, dec, xidErrors, fbFree, fbUsed, fbReserved *family
	nvlink, vgpu, uncorrRows, corrRows, remapFailure               *family
	grActive, tensorActive, dramActive, pcieTX, pcieRX             *family
	powerViol, thermalViol, sbeVol, dbeVol, sbeAgg, dbeAgg         *family
	xidCount, health                                               *family
	nvErrors                                                       [4]*family // CRC flit, CRC data, replay, recovery
}

// xidEvent is one XID a GPU reported.
type xidEvent struct {
	at   time.Time
	code int
}

// dcgmXIDWindow is dcgm-exporter's default --xid-count-window-size (5
// minutes, in ms); DCGM_EXP_XID_ERRORS_COUNT counts the XIDs within it.
const dcgmXIDWindow = 300000

// dcgmHealthWatches are the health watches the exporter reports for every
// GPU (gpuHealthChecks in gpu_health_collector.go, ALL from 4.5.3-4.8.2).
var dcgmHealthWatches = []string{"PCIE", "NVLINK", "PMU", "MCU", "MEM", "SM", "INFOROM", "THERMAL", "POWER", "DRIVER", "ALL"}

// The simulated node: four H100 SXM GPUs, each with 80 GB of HBM3.
const (
	dcgmGPUs     = 4
	dcgmModel    = "NVIDIA H100 80GB HBM3"
	dcgmHost     = "gpu-node-1"
	dcgmDriver   = "550.90.07"
	dcgmFBTotal  = 81559 // MiB, as nvidia-smi reports an H100 80GB
	dcgmReserved = 529   // MiB the driver keeps
	// dcgmAffected is the GPU that the fault scenarios break; the others stay healthy.
	dcgmAffected = 2
)

// dcgmLabels is the order of the template's fixed labels, then the label
// fields (sorted), then the XID attributes.
var dcgmLabels = []string{"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"}

func newDCGM(opts Options, m *model) *dcgm {
	d := &dcgm{m: m, start: opts.Start, optIn: opts.DCGMOptIn, fbTotal: dcgmFBTotal}
	for i := range dcgmGPUs {
		d.gpus = append(d.gpus, []string{
			strconv.Itoa(i),
			fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", 0x5f1c0a00+i*0x1111, 0x3b2a+i, 0x4c1d+i, 0x9e0f+i, 0x1a2b3c4d5e00+i),
			fmt.Sprintf("00000000:%02X:00.0", []int{0x18, 0x2a, 0x3a, 0x5d}[i]),
			"nvidia" + strconv.Itoa(i),
			dcgmModel, dcgmHost, dcgmDriver,
		})
	}
	d.xid = make([]int, dcgmGPUs)
	d.replayAcc = make([]float64, dcgmGPUs)
	d.dbeAcc = make([]float64, dcgmGPUs)
	d.rowsAcc = make([]float64, dcgmGPUs)
	d.throttleAcc = make([]float64, dcgmGPUs)
	d.xidAcc = make([]float64, dcgmGPUs)
	d.nvAcc = make([][4]float64, dcgmGPUs)
	d.xidEvents = make([][]xidEvent, dcgmGPUs)
	l := &d.list
	xidLabels := append(append([]string(nil), dcgmLabels...), "err_code", "err_msg")
	// In etc/default-counters.csv order.
	d.smClock = l.gauge("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", dcgmLabels...)
	d.memClock = l.gauge("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", dcgmLabels...)
	d.memTemp = l.gauge("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", dcgmLabels...)
	d.gpuTemp = l.gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", dcgmLabels...)
	d.power = l.gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", dcgmLabels...)
	d.energy = l.counter("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", dcgmLabels...)
	d.pcieReplay = l.counter("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", dcgmLabels...)
	d.util = l.gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", dcgmLabels...)
	d.memCopy = l.gauge("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", dcgmLabels...)
	d.enc = l.gauge("DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %).", dcgmLabels...)
	d.dec = l.gauge("DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %).", dcgmLabels...)
	d.xidErrors = l.gauge("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", xidLabels...)
	if d.optIn {
		d.powerViol = l.counter("DCGM_FI_DEV_POWER_VIOLATION", "Throttling duration due to power constraints (in ns).", dcgmLabels...)
		d.thermalViol = l.counter("DCGM_FI_DEV_THERMAL_VIOLATION", "Throttling duration due to thermal constraints (in ns).", dcgmLabels...)
		// The exporter's own fields, declared counter in the counters file
		// though neither counts up; attributes after the template's labels,
		// in key order.
		d.xidCount = l.counter("DCGM_EXP_XID_ERRORS_COUNT", "reported XIDs during last window", append(append([]string(nil), dcgmLabels...), "window_size_in_ms", "xid")...)
		d.health = l.counter("DCGM_EXP_GPU_HEALTH_STATUS", "DCGM reported health status", append(append([]string(nil), dcgmLabels...), "health_error_code", "health_watch")...)
	}
	d.fbFree = l.gauge("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", dcgmLabels...)
	d.fbUsed = l.gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", dcgmLabels...)
	d.fbReserved = l.gauge("DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).", dcgmLabels...)
	if d.optIn {
		d.sbeVol = l.counter("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Total number of single-bit volatile ECC errors.", dcgmLabels...)
		d.dbeVol = l.counter("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.", dcgmLabels...)
		d.sbeAgg = l.counter("DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "Total number of single-bit persistent ECC errors.", dcgmLabels...)
		d.dbeAgg = l.counter("DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "Total number of double-bit persistent ECC errors.", dcgmLabels...)
	}
	if d.optIn {
		for i, f := range []struct{ name, help string }{
			{"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "Total number of NVLink flow-control CRC errors."},
			{"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "Total number of NVLink data CRC errors."},
			{"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "Total number of NVLink retries."},
			{"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "Total number of NVLink recovery errors."},
		} {
			d.nvErrors[i] = l.counter(f.name, f.help, dcgmLabels...)
		}
	}
	d.nvlink = l.counter("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "Total number of NVLink bandwidth counters for all lanes.", dcgmLabels...)
	d.vgpu = l.gauge("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "vGPU License status", dcgmLabels...)
	d.uncorrRows = l.counter("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "Number of remapped rows for uncorrectable errors", dcgmLabels...)
	d.corrRows = l.counter("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "Number of remapped rows for correctable errors", dcgmLabels...)
	d.remapFailure = l.gauge("DCGM_FI_DEV_ROW_REMAP_FAILURE", "Whether remapping of rows has failed", dcgmLabels...)
	d.grActive = l.gauge("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", dcgmLabels...)
	d.tensorActive = l.gauge("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.", dcgmLabels...)
	d.dramActive = l.gauge("DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data.", dcgmLabels...)
	d.pcieTX = l.gauge("DCGM_FI_PROF_PCIE_TX_BYTES", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", dcgmLabels...)
	d.pcieRX = l.gauge("DCGM_FI_PROF_PCIE_RX_BYTES", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", dcgmLabels...)
	// DCGM reports DOUBLE fields with %f, INT64 fields with %d.
	for _, f := range []*family{d.power, d.grActive, d.tensorActive, d.dramActive} {
		f.fixed = true
	}
	for _, f := range d.list.list {
		if f == d.xidErrors || f == d.xidCount || f == d.health {
			continue
		}
		for _, g := range d.gpus {
			f.with(opts.Start, g...)
		}
	}
	d.record(&step{now: opts.Start, cond: baseline()})
	return d
}

func (d *dcgm) families() []*family { return d.list.list }

func (d *dcgm) exposition() exposition { return exposition{style: styleDCGM, format: formatDCGM} }

func (d *dcgm) record(s *step) {
	at, c := d.start, s.cond
	// Every GPU runs a tensor-parallel shard of the same batch.
	load := clamp(s.state.running/30, 0, 1)
	if c.asleep || s.state.running == 0 {
		load = 0
	}
	for i, g := range d.gpus {
		hit := i == dcgmAffected
		noise := func(sd float64) float64 { return sd * d.m.rng.NormFloat64() }
		util := clamp(math.Round(3+92*load+noise(2)), 0, 100)
		if c.gpuIdle {
			util = clamp(math.Round(1+noise(0.5)), 0, 4)
		}
		temp := 34 + 30*util/100 + float64(i) + noise(0.4)
		throttle := 0.0
		if hit {
			temp += c.gpuHeat
			throttle = c.throttle
		}
		clock := 1980.0
		if throttle > 0 {
			clock = math.Round(1980 - 900*throttle)
		}
		watts := 72 + 600*util/100 + noise(3)
		d.smClock.with(at, g...).value = clock
		d.memClock.with(at, g...).value = 2619
		d.gpuTemp.with(at, g...).value = math.Round(temp)
		d.memTemp.with(at, g...).value = math.Round(temp + 6)
		d.power.with(at, g...).value = math.Round(watts*1000) / 1000
		d.energy.with(at, g...).value += math.Round(watts * s.dt * 1000)
		d.util.with(at, g...).value = util
		d.memCopy.with(at, g...).value = math.Round(util * 0.45)
		d.enc.with(at, g...).value = 0
		d.dec.with(at, g...).value = 0
		// vLLM reserves 90% of the memory at start (--gpu-memory-utilization).
		used := math.Round(0.9*d.fbTotal + noise(8))
		if hit && c.fbFull > 0 {
			used = math.Round(c.fbFull * d.fbTotal)
		}
		used = min(used, d.fbTotal-dcgmReserved)
		d.fbUsed.with(at, g...).value = used
		d.fbFree.with(at, g...).value = d.fbTotal - dcgmReserved - used
		d.fbReserved.with(at, g...).value = dcgmReserved
		d.nvlink.with(at, g...).value += math.Round(load * 1.2e5 * s.dt)
		d.vgpu.with(at, g...).value = 0
		d.grActive.with(at, g...).value = math.Round(clamp(util/100-0.02, 0, 1)*1e6) / 1e6
		d.tensorActive.with(at, g...).value = math.Round(0.35*load*1e6) / 1e6
		d.dramActive.with(at, g...).value = math.Round(0.55*load*1e6) / 1e6
		d.pcieTX.with(at, g...).value = math.Round(2e7 + 3e8*load + noise(1e6))
		d.pcieRX.with(at, g...).value = math.Round(3e7 + 4e8*load + noise(1e6))
		if hit {
			d.replayAcc[i] += c.pcieReplays * s.dt
			if n := math.Floor(d.replayAcc[i]); n > 0 {
				d.pcieReplay.with(at, g...).value += n
				d.replayAcc[i] -= n
			}
			d.rowsAcc[i] += c.remapRows * s.dt
			if n := math.Floor(d.rowsAcc[i]); n > 0 {
				d.uncorrRows.with(at, g...).value += n
				d.rowsAcc[i] -= n
			}
			if c.remapFailure {
				d.remapFailure.with(at, g...).value = 1
			}
			if c.xid != 0 && d.xid[i] != c.xid {
				d.xid[i] = c.xid
				d.xidEvents[i] = append(d.xidEvents[i], xidEvent{s.now, c.xid})
			}
			d.xidAcc[i] += c.xidRate * s.dt
			for ; d.xidAcc[i] >= 1; d.xidAcc[i]-- {
				d.xidEvents[i] = append(d.xidEvents[i], xidEvent{s.now, c.xid})
			}
		}
		code := d.xid[i]
		msg := "Unknown Error"
		if t, ok := xidText[code]; ok {
			msg = t
		}
		xv := append(append([]string(nil), g...), strconv.Itoa(code), msg)
		// The series of the previous XID is gone: its labels changed.
		for k, sr := range d.xidErrors.series {
			if sr.values[0] == g[0] && sr.values[len(dcgmLabels)] != strconv.Itoa(code) {
				delete(d.xidErrors.series, k)
			}
		}
		d.xidErrors.with(at, xv...).value = float64(code)
		if d.optIn {
			d.throttleAcc[i] += throttle * s.dt * 1e9
			ns := math.Floor(d.throttleAcc[i])
			d.thermalViol.with(at, g...).value += ns
			d.throttleAcc[i] -= ns
			if hit {
				d.dbeAcc[i] += c.dbeRate * s.dt
				if n := math.Floor(d.dbeAcc[i]); n > 0 {
					d.dbeVol.with(at, g...).value += n
					d.dbeAgg.with(at, g...).value += n
					d.dbeAcc[i] -= n
					// Each double-bit error is reported as XID 48.
					for range int(n) {
						d.xidEvents[i] = append(d.xidEvents[i], xidEvent{s.now, 48})
					}
				}
				// Replays, with a recovery every 24 and CRC errors in
				// proportion, as a degrading link shows them.
				for k, per := range [4]float64{25, 10, 1, 1.0 / 24} {
					d.nvAcc[i][k] += c.nvlinkReplay * per * s.dt
					if n := math.Floor(d.nvAcc[i][k]); n > 0 {
						d.nvErrors[k].with(at, g...).value += n
						d.nvAcc[i][k] -= n
					}
				}
			}
			d.recordXIDCount(i, g, s.now)
			d.recordHealth(i, g, c, hit)
			d.powerViol.with(at, g...)
			d.sbeVol.with(at, g...)
			d.sbeAgg.with(at, g...)
		}
	}
}

// recordXIDCount writes GPU i's XIDs of the last window, one series per
// code, or a single 0 without a code when there were none (expcollector.go).
func (d *dcgm) recordXIDCount(i int, g []string, now time.Time) {
	kept := d.xidEvents[i][:0]
	counts := map[int]int{}
	for _, e := range d.xidEvents[i] {
		if now.Sub(e.at) < dcgmXIDWindow*time.Millisecond {
			kept = append(kept, e)
			counts[e.code]++
		}
	}
	d.xidEvents[i] = kept
	for k, sr := range d.xidCount.series {
		if sr.values[0] == g[0] {
			delete(d.xidCount.series, k)
		}
	}
	win := strconv.Itoa(dcgmXIDWindow)
	if len(counts) == 0 {
		// Prometheus reads an empty label value as no label.
		d.xidCount.with(d.start, append(append([]string(nil), g...), win, "")...).value = 0
		return
	}
	for code, n := range counts {
		d.xidCount.with(d.start, append(append([]string(nil), g...), win, strconv.Itoa(code))...).value = float64(n)
	}
}

// recordHealth writes DCGM's health result per watch for GPU i: 0 pass,
// 10 warn, 20 fail (dcgmHealthWatchResults_t), with the incident's code.
// The faults of the scenarios fail the watch DCGM ties them to: a
// double-bit ECC error the memory watch, NVLink replays or recoveries the
// NVLink watch (any is critical); PCIe replays above 8 a minute warn.
func (d *dcgm) recordHealth(i int, g []string, c conditions, hit bool) {
	for k, sr := range d.health.series {
		if sr.values[0] == g[0] {
			delete(d.health.series, k)
		}
	}
	for _, w := range dcgmHealthWatches {
		v, code := 0.0, "DCGM_FR_OK"
		switch {
		case !hit:
		case w == "MEM" && d.dbeVol.with(d.start, g...).value > 0:
			v, code = 20, "DCGM_FR_VOLATILE_DBE_DETECTED"
		case w == "NVLINK" && c.nvlinkReplay > 0:
			v, code = 20, "DCGM_FR_NVLINK_ERROR_CRITICAL"
		case w == "PCIE" && c.pcieReplays*60 > 8:
			v, code = 10, "DCGM_FR_PCI_REPLAY_RATE"
		}
		d.health.with(d.start, append(append([]string(nil), g...), code, w)...).value = v
	}
}

// xidText is the err_msg dcgm-exporter gives the XIDs the scenarios raise
// (internal/pkg/collector/xid_errors.go).
var xidText = map[int]string{
	0:  "No Error",
	13: "Graphics Engine Exception",
	31: "GPU memory page fault",
	43: "GPU stopped processing",
	48: "Double Bit ECC Error",
	74: "NVLINK Error",
	79: "GPU has fallen off the bus",
	95: "Uncontained ECC error",
}

// formatDCGM spells a value as dcgm-exporter does for INT64 fields
// (fmt %d); DOUBLE fields (family.fixed) get %f.
func formatDCGM(v float64) string {
	if sp, ok := special(v, "NaN"); ok {
		return sp
	}
	return strconv.FormatInt(int64(v), 10)
}
