// Package reports turns campaign result files (spec.Result) into reports for
// people and for CI: a text summary, a versioned JSON report, JUnit XML,
// Markdown for CI step summaries and one self-contained HTML page with plots.
// It also holds the progress display of long campaigns.
//
// A report covers one or more result files ("nights"), ordered by
// Result.Started. The last one is tonight; the earlier ones give every
// finding a status across nights (new, still failing, fixed) and the trend.
//
// The package reads only spec types: it needs no cgo and no GPU.
package reports
