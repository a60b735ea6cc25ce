/* jacobi: an elastic Jacobi solver for shoal (issue 8, after seed 004's Jacobi).
 *
 * Solves Laplace's equation on an N x N grid (top edge held at 1, the other edges at 0) by
 * ITERS Jacobi sweeps, rows split across the ranks. It reports its progress to shoal, and
 * when shoal asks it to resize (SIGUSR1) it writes the grid to $SHOAL_CHECKPOINT_DIR/jacobi.ckpt
 * at the next iteration boundary and exits 75; relaunched with SHOAL_RESTART=1 on any number of
 * ranks, it resumes from that checkpoint. With -c K it also checkpoints every K iterations, so
 * that a job that loses a node resumes from a recent one. Each element's update is the same
 * arithmetic whatever the number of ranks, so the final grid, and the line printed at the end,
 * are bit-identical to an uninterrupted run's.
 *
 *   mpicc -O2 -o jacobi jacobi.c
 *   shoal run --nodes 2:4 --deadline 10m --iterations 5000 -- ./jacobi -c 100 512 5000
 *
 * Options: -c K checkpoint every K iterations; -w MS emulate MS milliseconds of computing per
 * iteration on one node, divided among the ranks (to make scaling visible on a small machine);
 * -m MS emulate MS milliseconds of communication per iteration (not divided).
 * Prints "jacobi n=N iters=I sum=S hash=H" from rank 0 at the end.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shoal_elastic.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(double ms) {
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(((long long)(ms * 1e6)) % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

typedef struct {
    long magic, n, iter;
} header;
#define MAGIC 0x4a41434f4249L

int main(int argc, char **argv) {
    long every = 0;
    double work_ms = 0, comm_ms = 0;
    int opt;
    while ((opt = getopt(argc, argv, "c:w:m:")) != -1) {
        switch (opt) {
        case 'c': every = atol(optarg); break;
        case 'w': work_ms = atof(optarg); break;
        case 'm': comm_ms = atof(optarg); break;
        default: fprintf(stderr, "usage: jacobi [-c K] [-w MS] [-m MS] N ITERS\n"); return 2;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "usage: jacobi [-c K] [-w MS] [-m MS] N ITERS\n");
        return 2;
    }
    long n = atol(argv[optind]), total = atol(argv[optind + 1]);
    MPI_Init(&argc, &argv);
    shoal_elastic_init();
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long inner = n - 2;
    if (n < 3 || total < 0 || size > inner) {
        if (rank == 0) fprintf(stderr, "jacobi: need N >= 3, ITERS >= 0 and at most N-2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Rank r owns interior rows [lo, hi) (1-based grid rows), plus a ghost row on each side. */
    long lo = 1 + inner * rank / size, hi = 1 + inner * (rank + 1) / size, rows = hi - lo;
    double *u = calloc((rows + 2) * n, sizeof *u), *v = calloc((rows + 2) * n, sizeof *v);
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/jacobi.ckpt", shoal_checkpoint_dir());
    snprintf(tmp, sizeof tmp, "%s.tmp", path);

    long it = 0;
    FILE *f = shoal_restarting() ? fopen(path, "rb") : NULL;
    if (f) {
        header h;
        if (fread(&h, sizeof h, 1, f) != 1 || h.magic != MAGIC || h.n != n) {
            fprintf(stderr, "jacobi: %s is not a checkpoint of this problem\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        it = h.iter;
        /* Rows lo-1 .. hi (ghosts included) straight from the file: any rank count works. */
        fseek(f, sizeof h + (lo - 1) * n * sizeof(double), SEEK_SET);
        if (fread(u, sizeof(double), (rows + 2) * n, f) != (size_t)((rows + 2) * n)) {
            fprintf(stderr, "jacobi: short checkpoint %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fclose(f);
        if (rank == 0) fprintf(stderr, "jacobi: resumed from iteration %ld on %d ranks\n", it, size);
    } else {
        if (rank == 0)
            for (long j = 0; j < n; j++) u[j] = 1.0; /* the hot top edge */
        if (rank == 0) fprintf(stderr, "jacobi: starting at iteration 0 on %d ranks\n", size);
    }
    memcpy(v, u, (rows + 2) * n * sizeof *u);
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double *full = rank == 0 ? malloc(n * n * sizeof *full) : NULL;
    int *counts = malloc(size * sizeof *counts), *displs = malloc(size * sizeof *displs);
    for (int r = 0; r < size; r++) {
        long rl = 1 + inner * r / size, rh = 1 + inner * (r + 1) / size;
        counts[r] = (int)((rh - rl) * n);
        displs[r] = (int)(rl * n);
    }
    if (rank == 0) shoal_progress_ex(it, -1, 1);
    double comm_share = 0;
    while (it < total) {
        double t0 = now();
        MPI_Sendrecv(u + n, n, MPI_DOUBLE, up, 0, u + (rows + 1) * n, n, MPI_DOUBLE, down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + rows * n, n, MPI_DOUBLE, down, 1, u, n, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        nap(comm_ms);
        double t1 = now();
        for (long i = 1; i <= rows; i++)
            for (long j = 1; j < n - 1; j++)
                v[i * n + j] = 0.25 * (u[(i - 1) * n + j] + u[(i + 1) * n + j] + u[i * n + j - 1] + u[i * n + j + 1]);
        nap(work_ms * rows / inner);
        double *t = u;
        u = v;
        v = t;
        it++;
        double t2 = now();
        int ck = shoal_checkpoint_due(MPI_COMM_WORLD, it, every);
        double t3 = now();
        if (ck) {
            /* Gather the interior to rank 0, which adds the fixed edges and renames into place. */
            MPI_Gatherv(u + n, (int)(rows * n), MPI_DOUBLE, full, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                for (long j = 0; j < n; j++) full[j] = 1.0, full[(n - 1) * n + j] = 0.0;
                header h = {MAGIC, n, it};
                FILE *o = fopen(tmp, "wb");
                if (!o || fwrite(&h, sizeof h, 1, o) != 1 || fwrite(full, sizeof(double), n * n, o) != (size_t)(n * n) ||
                    fclose(o) != 0 || rename(tmp, path) != 0) {
                    perror("jacobi: write checkpoint");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (ck == SHOAL_CKPT_EXIT) {
                if (rank == 0) {
                    fprintf(stderr, "jacobi: checkpointed at iteration %ld, exiting 75 for a resize\n", it);
                    shoal_progress_ex(it, comm_share, 1);
                }
                MPI_Finalize();
                return SHOAL_EXIT_CHECKPOINTED;
            }
        }
        double share = ((t1 - t0) + (t3 - t2)) / (t3 - t0 > 0 ? t3 - t0 : 1);
        comm_share = it == 1 ? share : 0.8 * comm_share + 0.2 * share;
        if (rank == 0) shoal_progress(it, comm_share);
    }
    MPI_Gatherv(u + n, (int)(rows * n), MPI_DOUBLE, full, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (long j = 0; j < n; j++) full[j] = 1.0, full[(n - 1) * n + j] = 0.0;
        double sum = 0;
        uint64_t hash = 1469598103934665603ULL;
        for (long k = 0; k < n * n; k++) {
            sum += full[k];
            unsigned char *b = (unsigned char *)&full[k];
            for (size_t x = 0; x < sizeof(double); x++) hash = (hash ^ b[x]) * 1099511628211ULL;
        }
        shoal_progress_ex(it, comm_share, 1);
        printf("jacobi n=%ld iters=%ld sum=%.17g hash=%016llx\n", n, it, sum, (unsigned long long)hash);
    }
    MPI_Finalize();
    return 0;
}
