package testbin

import (
	"os"
	"testing"
	"time"
)

// TestCPUSeconds reads this process's CPU time before and after a spin of
// 200 ms of wall time: it grows by about that much (USER_HZ ticks are
// 10 ms), and a process that is gone is an error.
func TestCPUSeconds(t *testing.T) {
	before, err := CPUSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); {
		n++
	}
	after, err := CPUSeconds(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// On a loaded machine the spin may get less than its wall time.
	if d := after - before; d < 0.05 || d > 5 {
		t.Errorf("CPU time grew by %.2fs over a 200ms spin (%d turns), want about 0.2s", d, n)
	}
	if _, err := CPUSeconds(1 << 30); err == nil {
		t.Error("CPUSeconds of a pid that does not exist: no error")
	}
}
