#!/bin/sh
# The first link of a dependency chain: it writes what the next one reads.
#   first=$(shoal submit prepare.sh)
#   shoal submit -d afterok:$first analyse.sh
#SHOAL -n 1 -J prepare
#SHOAL --output prepare-%j.out

seq 1 100 > input.txt
echo "prepared $(wc -l < input.txt) values in $SHOAL_SUBMIT_DIR"
