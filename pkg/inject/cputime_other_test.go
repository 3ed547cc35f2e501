//go:build !unix

package inject

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
