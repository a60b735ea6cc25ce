// An MPI hello in C++: every rank says who it is and where it runs.
#include <mpi.h>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* node = std::getenv("SHOAL_NODE");
  std::printf("Hello from rank %d of %d on %s\n", rank, size, node ? node : "?");
  MPI_Finalize();
  return 0;
}
