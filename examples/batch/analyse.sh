#!/bin/sh
# The second link: it starts only once prepare.sh has ended with exit 0
# (-d afterok:ID); had prepare.sh failed, this job would fail with
# DependencyNeverSatisfied instead of running on missing input.
#SHOAL -n 1 -J analyse
#SHOAL --output analyse-%j.out

awk '{ s += $1 } END { print "sum of", NR, "values:", s }' input.txt
