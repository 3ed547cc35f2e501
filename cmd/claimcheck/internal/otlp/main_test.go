package otlp

import (
	"testing"

	"go.uber.org/goleak"
)

// The SDK's batch processors and the exporters' connections end with
// Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
