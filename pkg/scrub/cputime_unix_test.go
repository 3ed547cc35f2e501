//go:build unix

package scrub

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user and system), which
// a loaded machine inflates far less than the wall-clock time.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
