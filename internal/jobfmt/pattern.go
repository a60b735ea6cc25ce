package jobfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// OutputVars are the values an output file pattern may name.
type OutputVars struct {
	JobID      uint64 // %j: the job's ID
	ArrayJobID uint64 // %A: the array's ID (the job's own when it is no array's)
	TaskID     int    // %a: the task's index in its array
	InArray    bool
	Node       string // %N: the node that writes the file (the head)
	User       string // %u: the job's owner
	Name       string // %x: the job's name
}

// Output pattern letters, as sbatch's --output takes them.
const patternLetters = "jAaNux%"

// CheckPattern refuses a pattern with an unknown %-letter or a % at its end,
// naming the letter and the ones that exist.
func CheckPattern(p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		if i+1 == len(p) {
			return fmt.Errorf("%q ends with a lone %%: write %%%% for a percent sign", p)
		}
		i++
		if !strings.ContainsRune(patternLetters, rune(p[i])) {
			return fmt.Errorf("%q: unknown pattern %%%c; use %%j (job ID), %%A (array ID), %%a (task), %%N (node), %%u (user), %%x (job name) or %%%%", p, p[i])
		}
	}
	return nil
}

// ExpandPattern replaces the %-letters of a checked pattern with v. A job
// without a name writes its %x as "shoal"; a job that is no array's task
// writes %a as 0 and %A as its own ID.
func ExpandPattern(p string, v OutputVars) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+1 == len(p) {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch p[i] {
		case 'j':
			b.WriteString(strconv.FormatUint(v.JobID, 10))
		case 'A':
			id := v.ArrayJobID
			if !v.InArray {
				id = v.JobID
			}
			b.WriteString(strconv.FormatUint(id, 10))
		case 'a':
			b.WriteString(strconv.Itoa(v.TaskID))
		case 'N':
			b.WriteString(v.Node)
		case 'u':
			b.WriteString(v.User)
		case 'x':
			if v.Name == "" {
				b.WriteString("shoal")
			} else {
				b.WriteString(v.Name)
			}
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(p[i])
		}
	}
	return b.String()
}
