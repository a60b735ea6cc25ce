#!/bin/sh
# An MPI job: 4 ranks, 2 on each of 2 nodes, passing a token round a ring.
# Build the program once, where every node can read it:
#   mpicc.mpich -O2 -o ring ../mpi/ring.c
# then submit from this directory:
#   shoal submit mpi.sh
#SHOAL -n 4 --ppn 2
#SHOAL -J ring
#SHOAL --output ring-%j.out
#SHOAL --timeout 10m

echo "job $SHOAL_JOB_ID ($SHOAL_JOB_NAME) on $SHOAL_NODELIST: $SHOAL_NTASKS ranks on $SHOAL_NNODES nodes"
# srun here is shoal's: it starts one rank per slot of the job's nodes with
# the launcher of the program's MPI flavour (mpiexec.mpich for this one), and
# shoal job lists it as a step. A bare mpiexec would be whichever launcher the
# system's alternatives name, which may not be the program's.
srun ./ring 10
