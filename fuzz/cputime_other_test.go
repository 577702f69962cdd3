//go:build !unix

package fuzz

import "time"

// processCPU is 0: no getrusage here (BenchmarkCampaign leaves cases/cpu-s out).
func processCPU() time.Duration { return 0 }
