// Command shoal is the shoal agent and its command-line client.
//
// Run `shoal --help` for the commands, `shoal COMMAND --help` for one.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
