#!/bin/sh
# An elastic job: shoal runs it on 1 to 2 nodes and changes the count while
# it runs so that 400 iterations end within the deadline. The program writes
# its state to $SHOAL_CHECKPOINT_DIR when asked (SIGUSR1), exits 75, and is
# started again on the new count with SHOAL_RESTART=1.
# Build the program once, where every node can read it:
#   mpicc.mpich -O2 -I../mpi -o jacobi ../mpi/jacobi.c
#   shoal submit elastic.sh
#SHOAL --nodes 1:2 --ppn 1
#SHOAL --deadline 10m --iterations 400
#SHOAL -J jacobi
#SHOAL --output jacobi-%j.out

# exec: the attempt's exit status is the program's, 75 included.
exec srun ./jacobi 256 400
