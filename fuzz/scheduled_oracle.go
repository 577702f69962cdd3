package fuzz

import "github.com/bitparity/bitparity/spec"

// ScheduledOracle returns the CPU oracle of op running schedule s (the
// oracle schedule type of op, such as oracle.RMSNormSchedule), with the
// outputs and fp32 taps of the oracle targets. Schedule inference
// (package explain) runs every candidate schedule through it.
func ScheduledOracle(op spec.Op, s any) Target {
	return newOracleTarget(OracleName(op)+"["+scheduleString(s)+"]", op, s)
}
