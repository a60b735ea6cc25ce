/* halo: a communication-heavy bulk-synchronous kernel that times itself.
 *
 * Every rank owns a 1-D slab of a periodic domain. Each iteration it
 * exchanges halos of HALO_KIB KiB with both ring neighbours (the traffic of
 * a stencil code's boundary exchange), relaxes its slab SWEEPS times (a
 * little compute, so a rank on a loaded node holds everyone back), and
 * joins an allreduce of a residual vector (the global reduction of an
 * iterative solver). The slowest link of the ring and the slowest node set
 * the pace, as in miniMD/miniFE.
 *
 * Rank 0 prints one line that scripts parse:
 *
 *   halo ranks=4 iters=30 halo_kib=256 sweeps=4 time_s=1.234567 comm_s=0.987654 check=...
 *
 * time_s is the slowest rank's wall time of the loop (MPI_Wtime, after a
 * barrier), comm_s the slowest rank's time in halo exchange and allreduce.
 * Exits non-zero if the checksum is not finite.
 *
 *   mpicc.mpich -O2 -o halo halo.c
 *   mpiexec.mpich -genv UCX_TLS tcp -n 4 ./halo [iters] [halo_kib] [sweeps]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLAB (1 << 16)     /* doubles of the slab itself, beside the halos */
#define REDUCE_LEN 4096    /* doubles in the residual allreduce (32 KiB) */

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 30;
    int halo_kib = argc > 2 ? atoi(argv[2]) : 256;
    int sweeps = argc > 3 ? atoi(argv[3]) : 4;
    if (iters < 1 || halo_kib < 1 || sweeps < 0) {
        if (rank == 0) fprintf(stderr, "usage: halo [iters>=1] [halo_kib>=1] [sweeps>=0]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int h = halo_kib * 1024 / (int)sizeof(double);
    int n = SLAB + 2 * h;
    double *u = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n);
    double *res = malloc(sizeof(double) * REDUCE_LEN), *sum = malloc(sizeof(double) * REDUCE_LEN);
    if (!u || !v || !res || !sum) {
        fprintf(stderr, "halo: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < n; i++) u[i] = v[i] = (double)((rank * 7919 + i) % 1000) / 1000.0;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), comm = 0;
    for (int it = 0; it < iters; it++) {
        double c0 = MPI_Wtime();
        /* send my first h interior cells left, receive my right halo from the right, and back */
        MPI_Sendrecv(u + h, h, MPI_DOUBLE, left, 1, u + h + SLAB, h, MPI_DOUBLE, right, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + SLAB, h, MPI_DOUBLE, right, 2, u, h, MPI_DOUBLE, left, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        comm += MPI_Wtime() - c0;
        for (int s = 0; s < sweeps; s++) {
            for (int i = 1; i < n - 1; i++) v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
            double *t = u; u = v; v = t;
        }
        for (int i = 0; i < REDUCE_LEN; i++) res[i] = u[h + (i * 13) % SLAB] - v[h + (i * 13) % SLAB];
        c0 = MPI_Wtime();
        MPI_Allreduce(res, sum, REDUCE_LEN, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        comm += MPI_Wtime() - c0;
    }
    double mine = MPI_Wtime() - t0, slowest, slowest_comm;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&comm, &slowest_comm, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double check = 0;
    for (int i = 0; i < REDUCE_LEN; i++) check += fabs(sum[i]);
    int ok = isfinite(check);
    if (rank == 0) {
        printf("halo ranks=%d iters=%d halo_kib=%d sweeps=%d time_s=%.6f comm_s=%.6f check=%.6g\n", size, iters,
               halo_kib, sweeps, slowest, slowest_comm, check);
        fflush(stdout);
    }
    free(u); free(v); free(res); free(sum);
    /* MPICH 4 over UCX with UCX_TLS=tcp hangs in MPI_Finalize with 4 ranks
     * when a rank arrives there while others still finish the reductions
     * (seen here: the timing line printed, then no exit). A barrier first
     * avoids it. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 3;
}
