/* shoal_elastic.h: the job's side of shoal's elastic protocol (issue 8), for C and MPI programs.
 *
 * Header-only; include it after <mpi.h> to get the collective helpers. The protocol:
 *
 *   - shoal starts every process of an elastic job with SHOAL_CHECKPOINT_DIR (one directory for
 *     all attempts of the job), SHOAL_ATTEMPT, SHOAL_ITERATIONS, SHOAL_AGENT_SOCK,
 *     SHOAL_JOB_CAP_FILE (the attempt's capability, in a file only the job's owner reads) and
 *     SHOAL_RESTART=1 on every attempt after the first;
 *   - reports go over the agent's local Unix socket (SHOAL_AGENT_SOCK): its TCP API speaks only
 *     TLS, which a header-only helper does not; the socket needs none (the kernel vouches for it);
 *   - the program reports its iteration (shoal_progress), rank 0 is enough;
 *   - to resize, shoal sends SIGUSR1 (and answers progress reports with "checkpoint": true);
 *     at the next iteration boundary the program writes its state under SHOAL_CHECKPOINT_DIR and
 *     exits with SHOAL_EXIT_CHECKPOINTED (75); shoal relaunches it on the new node count with
 *     SHOAL_RESTART=1, and it resumes from the checkpoint;
 *   - exit 0 means converged and done; any other status is a failure.
 *
 * Usage (see jacobi.c):
 *
 *   MPI_Init(&argc, &argv);
 *   shoal_elastic_init();
 *   long it = shoal_restarting() ? read_checkpoint() : 0;
 *   for (; it < total; it++) {
 *       step();
 *       int ck = shoal_checkpoint_due(MPI_COMM_WORLD, it + 1, every);
 *       if (ck) write_checkpoint(it + 1);
 *       if (ck == SHOAL_CKPT_EXIT) { MPI_Finalize(); return SHOAL_EXIT_CHECKPOINTED; }
 *       if (rank == 0) shoal_progress(it + 1, comm_share);
 *   }
 */
#ifndef SHOAL_ELASTIC_H
#define SHOAL_ELASTIC_H

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SHOAL_EXIT_CHECKPOINTED 75

enum { SHOAL_CKPT_NONE = 0, SHOAL_CKPT_PERIODIC = 1, SHOAL_CKPT_EXIT = 2 };

static volatile sig_atomic_t shoal_resize_flag_;
static double shoal_last_report_;
static double shoal_report_every_ = 0.25; /* seconds; SHOAL_PROGRESS_INTERVAL_MS overrides */

static inline void shoal_on_usr1_(int sig) { (void)sig; shoal_resize_flag_ = 1; }

static inline double shoal_now_(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* shoal_elastic_init installs the SIGUSR1 handler. Call it once, early. */
static inline void shoal_elastic_init(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = shoal_on_usr1_;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    const char *ms = getenv("SHOAL_PROGRESS_INTERVAL_MS");
    if (ms && atoi(ms) >= 0) shoal_report_every_ = atoi(ms) / 1000.0;
}

/* shoal_restarting is true on a relaunch: resume from the checkpoint when there is one. */
static inline int shoal_restarting(void) {
    const char *r = getenv("SHOAL_RESTART");
    return r && strcmp(r, "1") == 0;
}

/* shoal_checkpoint_dir is where checkpoints go: $SHOAL_CHECKPOINT_DIR, or "." outside shoal. */
static inline const char *shoal_checkpoint_dir(void) {
    const char *d = getenv("SHOAL_CHECKPOINT_DIR");
    return d && *d ? d : ".";
}

/* shoal_resize_requested: this process was asked to checkpoint and exit. */
static inline int shoal_resize_requested(void) { return shoal_resize_flag_ != 0; }

/* shoal_job_cap_ reads the attempt's capability from SHOAL_JOB_CAP_FILE into buf (SHOAL_JOB_CAP
 * when a caller set it by hand); NULL when there is none. */
static inline const char *shoal_job_cap_(char *buf, size_t n) {
    const char *path = getenv("SHOAL_JOB_CAP_FILE");
    if (!path || !*path) return getenv("SHOAL_JOB_CAP");
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t got = fread(buf, 1, n - 1, f);
    fclose(f);
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r' || buf[got - 1] == ' ')) got--;
    buf[got] = 0;
    return got > 0 ? buf : NULL;
}

/* shoal_progress_ex (shoal_progress without final) reports iteration iter (and the share of
 * time spent communicating, in [0,1], or a negative value when not measured) to the local
 * agent, at most every SHOAL_PROGRESS_INTERVAL_MS (default 250) unless final is set. It never
 * fails the program: a report that cannot be delivered is dropped. Returns 1 when the agent
 * answered that a resize is requested (the same as SIGUSR1). */
static inline int shoal_progress_ex(long iter, double comm, int final) {
    const char *sock = getenv("SHOAL_AGENT_SOCK");
    const char *job = getenv("SHOAL_JOB_ID"), *att = getenv("SHOAL_ATTEMPT");
    if (!sock || !job || !att) return 0;
    double now = shoal_now_();
    if (!final && shoal_last_report_ > 0 && now - shoal_last_report_ < shoal_report_every_) return 0;
    shoal_last_report_ = now;
    char capbuf[256];
    const char *cap = shoal_job_cap_(capbuf, sizeof capbuf);
    if (!cap) return 0;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    if (strlen(sock) >= sizeof sa.sun_path) return 0;
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return 0;
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) { close(fd); return 0; }
    const char *host = "shoal.sock";
    char body[128], req[1024];
    if (comm >= 0)
        snprintf(body, sizeof body, "{\"attempt\":%s,\"iter\":%ld,\"comm\":%.4f}", att, iter, comm > 1 ? 1.0 : comm);
    else
        snprintf(body, sizeof body, "{\"attempt\":%s,\"iter\":%ld}", att, iter);
    int len = snprintf(req, sizeof req,
                       "POST /v1/jobs/%s/progress HTTP/1.0\r\nHost: %s\r\nAuthorization: Job %s\r\n"
                       "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                       job, host, cap, strlen(body), body);
    int asked = 0;
    if (len > 0 && len < (int)sizeof req && write(fd, req, len) == len) {
        char buf[2048];
        size_t got = 0;
        ssize_t r;
        while (got < sizeof buf - 1 && (r = read(fd, buf + got, sizeof buf - 1 - got)) > 0) got += r;
        buf[got] = 0;
        if (strstr(buf, "\"checkpoint\": true") || strstr(buf, "\"checkpoint\":true")) asked = 1;
    }
    close(fd);
    if (asked) shoal_resize_flag_ = 1;
    return asked;
}

static inline int shoal_progress(long iter, double comm) { return shoal_progress_ex(iter, comm, 0); }

#ifdef MPI_VERSION
/* shoal_checkpoint_due is collective over comm: every rank learns whether to checkpoint after
 * iteration iter: SHOAL_CKPT_EXIT when any rank was asked to resize (checkpoint, then exit 75),
 * SHOAL_CKPT_PERIODIC every `every` iterations (0 = never), so that a job that loses a node
 * resumes from a recent checkpoint, else SHOAL_CKPT_NONE. */
static inline int shoal_checkpoint_due(MPI_Comm comm, long iter, long every) {
    int mine = shoal_resize_flag_ ? 1 : 0, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) return SHOAL_CKPT_EXIT;
    if (every > 0 && iter % every == 0) return SHOAL_CKPT_PERIODIC;
    return SHOAL_CKPT_NONE;
}
#endif

#endif /* SHOAL_ELASTIC_H */
