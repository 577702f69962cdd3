package reports

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// FormatNames are the names of Formats, in order: the values `bitparity
// report --format` takes.
func FormatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	return names
}

// CheckFormat returns an error naming the formats when format is not one
// of FormatNames.
func CheckFormat(format string) error {
	for _, f := range Formats {
		if f.Name == format {
			return nil
		}
	}
	return fmt.Errorf("--format %q: want one of %s", format, strings.Join(FormatNames(), ", "))
}

// KindOfAll says what the files at paths hold (KindOf): KindScan when
// every one holds scan results, KindCampaign when none does; a mix is an
// error naming the files of each kind.
func KindOfAll(paths []string) (string, error) {
	var scans, campaigns []string
	for _, p := range paths {
		k, err := KindOf(p)
		if err != nil {
			return "", err
		}
		if k == KindScan {
			scans = append(scans, p)
		} else {
			campaigns = append(campaigns, p)
		}
	}
	if len(scans) > 0 && len(campaigns) > 0 {
		return "", fmt.Errorf("%s are scan results and %s campaign results: report on one kind at a time",
			strings.Join(scans, ", "), strings.Join(campaigns, ", "))
	}
	if len(scans) > 0 {
		return KindScan, nil
	}
	return KindCampaign, nil
}

// Emit writes r where `bitparity report` puts it: into dir in every
// format (WriteDir), listing on w the files written (those written before
// an error too), when dir is set; else on w in format (Write).
func (r *Report) Emit(w io.Writer, format, dir string) error {
	return emit(w, dir, func() error { return Write(w, r, format) },
		func() ([]string, error) { return WriteDir(dir, r) })
}

// Emit writes scan report r as (*Report).Emit does a campaign report.
func (r *ScanReport) Emit(w io.Writer, format, dir string) error {
	return emit(w, dir, func() error { return WriteScans(w, r, format) },
		func() ([]string, error) { return WriteScansDir(dir, r) })
}

// emit is Emit's choice: write when dir is "", else writeDir, listing on
// w the paths it wrote (those written before an error too).
func emit(w io.Writer, dir string, write func() error, writeDir func() ([]string, error)) error {
	if dir == "" {
		return write()
	}
	paths, err := writeDir()
	for _, p := range paths {
		fmt.Fprintln(w, p)
	}
	return err
}

// WriteFiles writes every format of the report on the campaign result
// files at paths (Load, Build) into dir (WriteDir), as `bitparity report
// --out-dir DIR PATHS...` does.
func WriteFiles(dir string, paths ...string) error {
	srcs, err := Load(paths...)
	if err != nil {
		return err
	}
	r, err := Build(srcs, time.Now())
	if err != nil {
		return err
	}
	_, err = WriteDir(dir, r)
	return err
}
