/* ring: passes a token around all ranks, then checks an allreduce.
 *
 * Prints one line per rank (rank, size, processor name) and, from rank 0,
 * the token's final value and the allreduce sum. Exits non-zero if either
 * is wrong, so a test can trust the exit code. With SHOAL_JOB_LOG set, each
 * rank appends "job,attempt" to that file (exactly-once checks).
 *
 *   mpicc -O2 -o ring ring.c && mpiexec -n 4 ./ring [rounds]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size, len, rounds = argc > 1 ? atoi(argv[1]) : 1;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    const char *node = getenv("SHOAL_NODE");
    printf("rank %d of %d on %s (shoal node %s)\n", rank, size, name, node ? node : "-");
    fflush(stdout);

    long token = 0;
    for (int r = 0; r < rounds; r++) {
        if (size == 1) { token++; continue; }
        if (rank == 0) {
            token++;
            MPI_Send(&token, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_LONG, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    long one = rank + 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    const char *logf = getenv("SHOAL_JOB_LOG");
    if (logf && rank == 0) {
        FILE *f = fopen(logf, "a");
        if (f) {
            fprintf(f, "%s,%s\n", getenv("SHOAL_JOB_ID") ? getenv("SHOAL_JOB_ID") : "?",
                    getenv("SHOAL_ATTEMPT") ? getenv("SHOAL_ATTEMPT") : "?");
            fclose(f);
        }
    }
    int ok = 1;
    if (rank == 0) {
        long want_token = (long)rounds * size, want_sum = (long)size * (size + 1) / 2;
        ok = token == want_token && sum == want_sum;
        printf("ring token %ld (want %ld), allreduce %ld (want %ld): %s\n", token, want_token, sum, want_sum,
               ok ? "ok" : "WRONG");
    }
    MPI_Finalize();
    return ok ? 0 : 3;
}
