package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/bitparity/bitparity/reports"
	"github.com/bitparity/bitparity/slurm"
	"github.com/bitparity/bitparity/spec"
	"github.com/bitparity/bitparity/verdict"
)

// slurmCmd is `bitparity slurm [flags] -- RUN FLAGS` (write the campaign
// folder and submit it, package slurm) or `bitparity slurm merge DIR`
// (the merge job, slurm.Merge).
func slurmCmd(stdout, stderr io.Writer, args []string) error {
	if len(args) > 0 && args[0] == "merge" {
		return slurmMergeCmd(stdout, stderr, args[1:])
	}
	fs, o, sbatchArgs, writeOnly, dryRun := slurmFlags(stderr)
	if ok, err := parse(fs, args); !ok {
		return err
	}
	if *dryRun && *writeOnly {
		return usageErr("slurm: --dry-run and --write-only exclude each other")
	}
	o.SbatchArgs, o.RunArgs = *sbatchArgs, fs.Args()
	p, err := slurm.New(*o)
	if err != nil {
		return usageErr("slurm: %v", err)
	}
	if err := checkBucket(p.Corpus); err != nil {
		return usageErr("slurm: --corpus: %v", err)
	}
	for _, k := range runSplitList(p.Known) {
		if err := checkBucket(k); err != nil {
			return usageErr("slurm: --known: %v", err)
		}
	}
	s, err := slurm.Render(p, *o)
	if err != nil {
		return usageErr("slurm: %v", err)
	}
	at := func(name string) string { return filepath.Join(p.Dir, name) }
	if *dryRun {
		fmt.Fprintf(stdout, "# %s\n%s\n# %s\n%s\n# %s\n%s", at(slurm.ShardJob), s.Shard, at(slurm.MergeJob), s.Merge, at(slurm.SubmitFile), s.Submit)
		return nil
	}
	if err := slurm.Write(p, s); err != nil {
		return usageErr("slurm: %v", err)
	}
	fmt.Fprintf(stdout, "wrote %s, %s, %s and %s\n", at(slurm.PlanFile), at(slurm.ShardJob), at(slurm.MergeJob), at(slurm.SubmitFile))
	if *writeOnly {
		fmt.Fprintf(stdout, "submit with: bash %s\n", spec.ShellQuote(at(slurm.SubmitFile)))
		return nil
	}
	jid, mid, err := slurm.Submit(o.Sbatch, p)
	if jid != "" {
		fmt.Fprintf(stdout, "submitted shard array job %s (%d tasks)\n", jid, p.Shards)
	}
	if err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("slurm: %w", err))
	}
	fmt.Fprintf(stdout, "submitted merge job %s (after job %s ends)\n", mid, jid)
	fmt.Fprintf(stdout, "logs %s; the merged result will be %s, its verdict %s\n", at("logs"), at("result.json"), at(slurm.VerdictFile))
	return nil
}

// slurmFlags defines bitparity slurm's flags.
func slurmFlags(stderr io.Writer) (fs *flag.FlagSet, o *slurm.Options, sbatchArgs *multiFlag, writeOnly, dryRun *bool) {
	fs = newFlagSet("slurm", stderr, "usage: bitparity slurm --dir DIR --shards N [flags] -- [run flags]\n"+
		"       bitparity slurm merge DIR\n"+
		"\nWrites DIR/shard.sbatch (an array job: task i runs `bitparity run --shard i/N` with the run\n"+
		"flags after --), DIR/merge.sbatch (bitparity slurm merge DIR: merged result, reports, corpus,\n"+
		"verdict; it names every shard that failed and the sbatch command that reruns only those)\n"+
		"and DIR/submit.sh, then submits the array and the merge with --dependency=afterany.\n"+
		"\nflags:")
	o, sbatchArgs = &slurm.Options{}, &multiFlag{}
	fs.StringVar(&o.Dir, "dir", "", "campaign folder `DIR` on a filesystem every node sees: scripts, logs, shard results, merged result and reports (required)")
	fs.IntVar(&o.Shards, "shards", 0, "number of shards `N`: array tasks 0..N-1, task i runs run --shard i/N (required)")
	fs.IntVar(&o.GPUsPerTask, "gpus-per-task", 0, "GPUs per array task (#SBATCH --gpus-per-task); with more than 1, each task runs --gpus all over its GPUs")
	fs.IntVar(&o.CPUsPerTask, "cpus-per-task", 0, "CPUs per array task (#SBATCH --cpus-per-task; 0: the cluster's default)")
	fs.StringVar(&o.Partition, "partition", "", "Slurm partition of both jobs")
	fs.StringVar(&o.Account, "account", "", "Slurm account of both jobs")
	fs.StringVar(&o.Time, "time", "", "time limit of each array task (#SBATCH --time, e.g. 2:00:00); give the campaign's --duration some room")
	fs.StringVar(&o.Mem, "mem", "", "memory of each array task (#SBATCH --mem, e.g. 16G)")
	fs.Var(sbatchArgs, "sbatch-arg", "another #SBATCH line for both jobs, e.g. --qos=long (repeatable)")
	fs.StringVar(&o.Corpus, "corpus", "", "merged corpus: a folder or bucket URL (s3://, gs://, azblob://, file://) the merge job writes every shard's case files into (default DIR/corpus)")
	fs.StringVar(&o.Known, "known", "", "comma-separated corpus folders or bucket URLs of known findings, for the merge's verdict (run --known)")
	fs.StringVar(&o.Bin, "bin", "", "the bitparity binary the jobs run, as the nodes see it (default: this program)")
	fs.StringVar(&o.Sbatch, "sbatch", "sbatch", "the sbatch program")
	writeOnly = fs.Bool("write-only", false, "write the folder and scripts, print the commands that submit them, submit nothing")
	dryRun = fs.Bool("dry-run", false, "print the scripts and the commands, write and submit nothing")
	return fs, o, sbatchArgs, writeOnly, dryRun
}

// slurmMergeCmd is `bitparity slurm merge DIR`, the merge job
// (slurm.Merge): it prints the campaign's summary like bitparity run,
// then every missing shard and the command that reruns only those. Exit 3
// when a shard is missing, else run's verdict.
func slurmMergeCmd(stdout, stderr io.Writer, args []string) error {
	fl := newFlagSet("slurm merge", stderr, "usage: bitparity slurm merge DIR\n\nMerges the shards of the Slurm campaign in DIR (written by bitparity slurm); the merge job runs it.")
	if ok, err := parse(fl, args); !ok {
		return err
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return usageErr("slurm merge: want one campaign folder")
	}
	p, err := slurm.ReadPlan(fl.Arg(0))
	if err != nil {
		return usageErr("slurm merge: %v", err)
	}
	known, err := verdict.LoadKnown(context.Background(), runSplitList(p.Known), stderr)
	if err != nil {
		return usageErr("slurm merge: %v", err)
	}
	m, err := slurm.Merge(p, slurm.MergeOptions{Known: known, Reports: func(dir, res string) error { return reports.WriteFiles(dir, res) }})
	v := m.Verdict
	fmt.Fprintf(stdout, "bitparity slurm merge %s: %d of %d shard(s) finished\n", p.Dir, len(v.Merged), p.Shards)
	if err != nil {
		return withCode(spec.ExitInternal, fmt.Errorf("slurm merge: %w", err))
	}
	m.Text(stdout, p)
	if v.Exit != spec.ExitOK {
		return &exitError{code: v.Exit, err: fmt.Errorf("slurm merge: %s", v.Message)}
	}
	return nil
}
