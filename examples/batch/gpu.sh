#!/bin/sh
# A job whose one process needs a GPU. It is placed only on nodes
# whose agents found a GPU (or were given one with shoal agent --pe gpu=N);
# on a cluster without one it stays queued, and shoal job ID says why.
#   shoal submit gpu.sh
#SHOAL -n 1 --pe gpu:1
#SHOAL -J gpu-query
#SHOAL --output gpu-%j.out

nvidia-smi --query-gpu=name,memory.total --format=csv
