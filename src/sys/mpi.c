/* fsbench's calls into the system's MPI library (the `mpi` feature), with plain C types: what
 * MPI's handles are (pointers in Open MPI, integers in MPICH) stays in mpi.h, so the Rust side
 * (sys/mpi.rs) needs neither bindings generated from it nor one layout per library. Every
 * function returns MPI's error code (MPI_SUCCESS is 0); a request is an MPI_Request of its own on
 * the heap, freed by the test that finds it complete (NULL where it did not start: MPI's default
 * error handler aborts the job first, another may return). */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

int fsb_mpi_init(int *multiple) {
    int provided = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    *multiple = provided >= MPI_THREAD_MULTIPLE;
    return rc;
}

int fsb_mpi_initialized(int *flag) { return MPI_Initialized(flag); }

int fsb_mpi_finalize(void) { return MPI_Finalize(); }

int fsb_mpi_rank(int *rank) { return MPI_Comm_rank(MPI_COMM_WORLD, rank); }

int fsb_mpi_size(int *size) { return MPI_Comm_size(MPI_COMM_WORLD, size); }

int fsb_mpi_processor_name_max(void) { return MPI_MAX_PROCESSOR_NAME; }

/* `name` holds fsb_mpi_processor_name_max() bytes. */
int fsb_mpi_processor_name(char *name, int *len) { return MPI_Get_processor_name(name, len); }

/* A request of its own for a call to start (NULL where memory ran out); *req stays NULL until
 * fsb_started says the call started it. */
static MPI_Request *fsb_request(void **req) {
    *req = NULL;
    return malloc(sizeof(MPI_Request));
}

/* *req: the request `rc` started, or NULL where it did not start (then nothing is in flight). */
static int fsb_started(int rc, MPI_Request *r, void **req) {
    if (rc != MPI_SUCCESS) {
        free(r);
        r = NULL;
    }
    *req = r;
    return rc;
}

int fsb_mpi_isend(const void *buf, int len, int to, int tag, void **req) {
    MPI_Request *r = fsb_request(req);
    return r == NULL ? MPI_ERR_NO_MEM
                     : fsb_started(MPI_Isend(buf, len, MPI_BYTE, to, tag, MPI_COMM_WORLD, r), r, req);
}

int fsb_mpi_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

/* Sets *done, and frees the request once it is. */
int fsb_mpi_test(void *req, int *done) {
    int rc = MPI_Test((MPI_Request *)req, done, MPI_STATUS_IGNORE);
    if (*done)
        free(req);
    return rc;
}

/* A message with `tag` from `from` (MPI_ANY_SOURCE when negative), if one is there: *found, and
 * then its source, its length in bytes and the matched message for fsb_mpi_mrecv. */
int fsb_mpi_improbe(int from, int tag, int *found, int *source, int *len, void **msg) {
    MPI_Message *m = malloc(sizeof *m);
    MPI_Status st;
    int rc;
    *found = 0;
    *msg = NULL;
    if (m == NULL)
        return MPI_ERR_NO_MEM;
    rc = MPI_Improbe(from < 0 ? MPI_ANY_SOURCE : from, tag, MPI_COMM_WORLD, found, m, &st);
    if (rc != MPI_SUCCESS || !*found) {
        free(m);
        *found = 0;
        return rc;
    }
    *source = st.MPI_SOURCE;
    rc = MPI_Get_count(&st, MPI_BYTE, len);
    *msg = m;
    return rc;
}

/* Receives a message fsb_mpi_improbe matched into `buf` (its `len` bytes), and frees it. */
int fsb_mpi_mrecv(void *buf, int len, void *msg) {
    int rc = MPI_Mrecv(buf, len, MPI_BYTE, (MPI_Message *)msg, MPI_STATUS_IGNORE);
    free(msg);
    return rc;
}

int fsb_mpi_allreduce_max_u64(uint64_t mine, uint64_t *max) {
    return MPI_Allreduce(&mine, max, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
}

int fsb_mpi_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
