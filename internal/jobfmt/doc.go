// Package jobfmt holds the textual forms Slurm users expect of a job (issue
// 19): compressed node lists (n[01-04]) and the %-patterns of output file
// names (%j %a %A %N %u %x). It is pure: no I/O, no clock.
package jobfmt
