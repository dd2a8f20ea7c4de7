package simulator

import "time"

// pythonProcess is what prometheus_client's default collectors add to every
// Python server that is not in multiprocess mode (vLLM): the GC, platform
// and process collectors. They never have _created series.
type pythonProcess struct {
	gcCollected, gcUncollectable, gcCollections *family
	info, virtualMem, residentMem, startTime    *family
	cpu, openFDs, maxFDs                        *family
	start                                       time.Time
}

func newPythonProcess(l *familyList, start time.Time) *pythonProcess {
	p := &pythonProcess{start: start}
	p.gcCollected = l.counter("python_gc_objects_collected_total", "Objects collected during gc", "generation")
	p.gcUncollectable = l.counter("python_gc_objects_uncollectable_total", "Uncollectable objects found during GC", "generation")
	p.gcCollections = l.counter("python_gc_collections_total", "Number of times this generation was collected", "generation")
	p.info = l.gauge("python_info", "Python platform information", "implementation", "major", "minor", "patchlevel", "version")
	p.virtualMem = l.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
	p.residentMem = l.gauge("process_resident_memory_bytes", "Resident memory size in bytes.")
	p.startTime = l.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.")
	p.cpu = l.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.")
	p.openFDs = l.gauge("process_open_fds", "Number of open file descriptors.")
	p.maxFDs = l.gauge("process_max_fds", "Maximum number of open file descriptors.")
	for _, f := range []*family{p.gcCollected, p.gcUncollectable, p.gcCollections, p.cpu} {
		f.noCreated = true
	}
	for _, g := range []string{"0", "1", "2"} {
		p.gcCollected.with(start, g)
		p.gcUncollectable.with(start, g)
		p.gcCollections.with(start, g)
	}
	p.info.with(start, "CPython", "3", "12", "3", "3.12.3").value = 1
	p.virtualMem.with(start).value = 2.1474836480e10
	p.residentMem.with(start).value = 5.106151424e9
	p.startTime.with(start).value = float64(start.UnixNano()/1e7) / 100
	p.cpu.with(start).value = 42.5
	p.openFDs.with(start).value = 49
	p.maxFDs.with(start).value = 1048576
	return p
}

func (p *pythonProcess) record(s *step) {
	busy := 0.2 + 0.01*s.state.running
	p.cpu.with(p.start).value += s.dt * busy
	for i, g := range []string{"0", "1", "2"} {
		rate := []float64{40, 4, 0.3}[i] * busy
		p.gcCollections.with(p.start, g).value += float64(int(rate * s.dt))
		p.gcCollected.with(p.start, g).value += float64(int(rate * s.dt * 60))
	}
}
