//go:build !unix

package scrub

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
