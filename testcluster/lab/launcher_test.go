package lab

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A command run through the launcher is quoted word by word, and the
// launcher's sh -c "$*" reads back the words as they were.
func TestThroughLauncher(t *testing.T) {
	t.Parallel()
	argv := []string{"mpirun", "--host", "n01:1,n05:1", "sh", "-c", "echo it's"}
	got := throughLauncher("/lab/rsh", "n01", argv)
	want := []string{"/lab/rsh", "n01", "'mpirun'", "'--host'", "'n01:1,n05:1'", "'sh'", "'-c'", `'echo it'\''s'`}
	if !slices.Equal(got, want) {
		t.Fatalf("throughLauncher = %q, want %q", got, want)
	}
	out, err := exec.Command("sh", "-c", `printf '%s|' `+strings.Join(got[2:], " ")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != strings.Join(argv, "|")+"|" {
		t.Fatalf("the launcher's shell reads %q, want %q", out, strings.Join(argv, "|")+"|")
	}
}

// A node without a hog cgroup runs argv as it is.
func TestInHogCgroup_NoCgroup(t *testing.T) {
	t.Parallel()
	argv := []string{"mpirun", "-np", "4"}
	got, err := (&Lab{}).InHogCgroup("n01", argv)
	if err != nil || !slices.Equal(got, argv) {
		t.Fatalf("InHogCgroup without cgroups = %q, %v; want argv as it is", got, err)
	}
}
