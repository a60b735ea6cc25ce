package jobrun

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/shoal-hpc/shoal/agent/jobexec"
	"github.com/shoal-hpc/shoal/internal/jobfmt"
	"github.com/shoal-hpc/shoal/raftfsm"
)

// teeWait is how long the writers of --output and --error may take to
// drain once the launcher is done (processes the job left behind may still
// hold the pipe; the sweep kills them).
const teeWait = 10 * time.Second

// outputVars are the values of an attempt's output file patterns.
func outputVars(j *raftfsm.Job, node string) jobfmt.OutputVars {
	return jobfmt.OutputVars{JobID: j.ID, ArrayJobID: j.ArrayJobID, TaskID: j.ArrayTaskID, InArray: j.InArray(),
		Node: node, User: j.Owner, Name: j.Spec.Name}
}

// outputFiles starts the writers of a job's --output and --error files: a
// tee per file, run as the job's owner in its working directory (so the
// file is created with the owner's rights, and a path the owner chose
// reaches nothing the owner could not), between the job's output and the
// attempt's log, which `shoal logs` keeps reading. Without --error, stderr
// goes to the --output file too, as sbatch does. It returns the writers the
// job's processes get (the attempt's logs when there is no file) and a
// function to call once the launch is over.
func (n *Node) outputFiles(j *raftfsm.Job, stdout, stderr *os.File) (outW, errW *os.File, finish func(), err error) {
	outW, errW = stdout, stderr
	if j.Spec.Output == "" && j.Spec.Error == "" {
		return outW, errW, func() {}, nil
	}
	cred, _, err := n.credentialFor(j.Owner)
	if err != nil {
		return nil, nil, nil, err
	}
	tee, err := exec.LookPath("tee")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--output/--error need tee on %s: %w", n.cfg.Name, err)
	}
	vars := outputVars(j, n.cfg.Name)
	var writers []*os.File
	var tees []*exec.Cmd
	stop := func() {
		for _, w := range writers {
			_ = w.Close()
		}
		deadline := time.After(teeWait)
		for _, c := range tees {
			done := make(chan struct{})
			go func() { _ = c.Wait(); close(done) }()
			select {
			case <-done:
			case <-deadline:
				_ = c.Process.Kill()
				<-done
			}
		}
	}
	start := func(pattern string, log *os.File) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		// tee is not the job's: outside its cgroup, so the attempt's kill
		// cannot cut its output short.
		cmd, err := n.command(cred, nil, j.Spec.Workdir, []string{tee, jobfmt.ExpandPattern(pattern, vars)}, []string{"PATH=/usr/bin:/bin"})
		if err != nil {
			_ = w.Close()
			return nil, err
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = r, log, stderr
		if err := jobexec.Start(cmd); err != nil {
			_ = w.Close()
			return nil, fmt.Errorf("start the writer of %s: %w", pattern, err)
		}
		writers, tees = append(writers, w), append(tees, cmd)
		return w, nil
	}
	if j.Spec.Output != "" {
		if outW, err = start(j.Spec.Output, stdout); err != nil {
			stop()
			return nil, nil, nil, err
		}
		errW = outW
	}
	if j.Spec.Error != "" {
		if errW, err = start(j.Spec.Error, stderr); err != nil {
			stop()
			return nil, nil, nil, err
		}
	}
	return outW, errW, stop, nil
}
