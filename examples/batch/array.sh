#!/bin/sh
# A parameter sweep: one job per task, at most 2 running at once. Each task
# finds its index in the environment and writes its own output file.
#   shoal submit array.sh
#SHOAL -n 1 --array 0-3%2
#SHOAL -J sweep
#SHOAL --output sweep-%A_%a.out

size=$(( (SHOAL_ARRAY_TASK_ID + 1) * 100 ))
echo "task $SHOAL_ARRAY_TASK_ID of array $SHOAL_ARRAY_JOB_ID: size $size"
