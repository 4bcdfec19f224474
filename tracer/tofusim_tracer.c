/*
 * tofusim's MPI tracer: a PMPI interposition library that writes an OTF2
 * trace of an MPI program (issue 20; docs/traces.md).
 *
 * Loaded with LD_PRELOAD by `tofusim trace record -- mpirun ...`. Every MPI
 * call it wraps becomes an Enter and a Leave of the call's region, with the
 * standard OTF2 MPI records between them: MpiSend / MpiRecv for blocking
 * point-to-point, MpiIsend / MpiIrecvRequest when a non-blocking call is
 * posted and MpiIsendComplete / MpiIrecv when a wait or test completes it,
 * MpiCollectiveBegin / MpiCollectiveEnd for collectives. The compute time
 * between calls is the gap between a Leave and the next Enter (wall time,
 * CLOCK_MONOTONIC in nanoseconds: all ranks of a one-machine run share it).
 *
 * Communicators: MPI_COMM_WORLD is communicator 0, each rank's MPI_COMM_SELF
 * one of one member; each communicator made by
 * a wrapped constructor (split, dup, create, split_type, cart_create,
 * cart_sub) gets a global id from its rank 0 (that rank's world rank and
 * its own creation count), broadcast to its members; rank 0 of the world
 * gathers them all at MPI_Finalize and writes the global definitions (one
 * location and location group per rank, one group per communicator over
 * the world ranks). Calls on a communicator the tracer did not see made
 * (an inter-communicator, one from a call it does not wrap) are recorded
 * on communicator OTF2_UNDEFINED_COMM, which the replay refuses by name.
 *
 * Collective sizes: sizeSent is the bytes of the rank's send buffer(s) the
 * call reads, sizeReceived the bytes of its receive buffer(s) it writes (a
 * bcast's root sends count*size and receives 0; an alltoall sends and
 * receives count*size per rank of the communicator).
 *
 * A request completed as cancelled (MPI_Cancel, then a wait or test) is
 * an MpiRequestCancelled record.
 *
 * Probes and MPI_Cancel are regions only (the receive after a probe, and
 * the cancelled completion, carry their effect). Calls the replay does not
 * model (persistent and non-blocking collective requests, freed requests,
 * one-sided communication, MPI-IO, ...) are wrapped too, as a region of
 * their own name with no MPI record, so the replay can refuse the trace
 * naming the call and the rank instead of skipping them silently.
 *
 * Threads: only the thread that called MPI_Init records; calls from other
 * threads (MPI_THREAD_SERIALIZED or MULTIPLE programs) are counted, and the
 * count is written with the calibration, so the replay refuses such a trace
 * by name instead of replaying it without them.
 *
 * Environment: TOFUSIM_TRACE_DIR, the archive's directory (default
 * ./tofusim-trace; it must not exist yet); TOFUSIM_TRACE_CALIBRATE, when
 * set, times a ping-pong after the program (see calibrate()).
 */
#define OTF2_MPI_USE_PMPI
#include <mpi.h>
#include <otf2/otf2.h>
#include <otf2/OTF2_MPI_Collectives.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

/* The regions: every wrapped call, in one list (X-macro: the enum and the
 * names come from the same lines). */
#define REGIONS(X) \
    X(MPI_Init) X(MPI_Init_thread) X(MPI_Finalize) \
    X(MPI_Send) X(MPI_Ssend) X(MPI_Bsend) X(MPI_Rsend) X(MPI_Recv) \
    X(MPI_Isend) X(MPI_Issend) X(MPI_Ibsend) X(MPI_Irsend) X(MPI_Irecv) \
    X(MPI_Sendrecv) X(MPI_Sendrecv_replace) \
    X(MPI_Wait) X(MPI_Waitall) X(MPI_Waitany) X(MPI_Waitsome) \
    X(MPI_Test) X(MPI_Testall) X(MPI_Testany) X(MPI_Testsome) \
    X(MPI_Barrier) X(MPI_Bcast) X(MPI_Reduce) X(MPI_Allreduce) \
    X(MPI_Gather) X(MPI_Gatherv) X(MPI_Scatter) X(MPI_Scatterv) \
    X(MPI_Allgather) X(MPI_Allgatherv) X(MPI_Alltoall) X(MPI_Alltoallv) \
    X(MPI_Reduce_scatter) X(MPI_Reduce_scatter_block) X(MPI_Scan) X(MPI_Exscan) \
    X(MPI_Comm_split) X(MPI_Comm_dup) X(MPI_Comm_create) X(MPI_Comm_split_type) \
    X(MPI_Cart_create) X(MPI_Cart_sub) X(MPI_Comm_free) \
    X(MPI_Probe) X(MPI_Iprobe) X(MPI_Send_init) X(MPI_Recv_init) X(MPI_Start) \
    X(MPI_Startall) X(MPI_Cancel) X(MPI_Request_free) \
    X(MPI_Ibarrier) X(MPI_Ibcast) X(MPI_Iallreduce) X(MPI_Ireduce) X(MPI_Ialltoall) \
    X(MPI_Iallgather) X(MPI_Alltoallw) X(MPI_Put) X(MPI_Get) X(MPI_Accumulate) \
    X(MPI_Win_fence) X(MPI_Intercomm_create) \
    X(MPI_Neighbor_alltoall) X(MPI_Neighbor_allgather) X(MPI_Ialltoallv) X(MPI_Iallgatherv) X(MPI_Igather) \
    X(MPI_Iscatter) X(MPI_Ireduce_scatter_block) X(MPI_Iscan) X(MPI_Mprobe) X(MPI_Improbe) X(MPI_Mrecv) \
    X(MPI_Imrecv) X(MPI_Bsend_init) X(MPI_Ssend_init) X(MPI_Rsend_init) X(MPI_Win_create) X(MPI_Win_allocate) \
    X(MPI_Win_lock) X(MPI_Win_unlock) X(MPI_Win_lock_all) X(MPI_Win_unlock_all) X(MPI_Win_flush) \
    X(MPI_Fetch_and_op) X(MPI_Compare_and_swap) X(MPI_Get_accumulate) X(MPI_Rput) X(MPI_Rget) \
    X(MPI_Comm_spawn) X(MPI_Intercomm_merge) X(MPI_Comm_create_group) X(MPI_Comm_idup) \
    X(MPI_File_open) X(MPI_File_close) X(MPI_File_read) X(MPI_File_write) X(MPI_File_read_all) \
    X(MPI_File_write_all) X(MPI_File_read_at_all) X(MPI_File_write_at_all) \
    X(MPI_Neighbor_alltoallv) X(MPI_Neighbor_allgatherv) X(MPI_Neighbor_alltoallw) X(MPI_Ineighbor_alltoall) \
    X(MPI_Ineighbor_allgather) X(MPI_Ireduce_scatter) X(MPI_Iexscan) X(MPI_Ialltoallw) X(MPI_Win_allocate_shared) \
    X(MPI_Win_post) X(MPI_Win_start) X(MPI_Win_complete) X(MPI_Win_wait) X(MPI_Raccumulate) X(MPI_Win_free) \
    X(MPI_Comm_dup_with_info) X(MPI_Graph_create) X(MPI_Dist_graph_create) X(MPI_Dist_graph_create_adjacent)

#define AS_ENUM(n) R_##n,
#define AS_NAME(n) #n,
enum region { REGIONS(AS_ENUM) REGION_COUNT };
static const char *region_names[] = { REGIONS(AS_NAME) };

/* ---- state of this rank's recording --------------------------------- */

static OTF2_Archive *archive;
static OTF2_EvtWriter *evt;
static int world_rank = -1, world_size;
static int recording_on;
static pthread_t main_thread;
/* MPI calls made by threads other than MPI_Init's: not recorded. */
static uint64_t other_thread_calls;

static int on_main_thread(void) { return pthread_equal(pthread_self(), main_thread); }
/* Recording, on the thread that records. */
#define recording (recording_on && on_main_thread())
static uint64_t events;
static uint64_t first_time = UINT64_MAX;
static uint32_t comms_made;

static uint64_t now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc, void *cb, bool final) {
    (void)user; (void)type; (void)loc; (void)cb; (void)final;
    return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef loc) {
    (void)user; (void)type; (void)loc;
    return now();
}
static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush };

static void fail(const char *what) {
    fprintf(stderr, "tofusim tracer (rank %d): %s\n", world_rank, what);
    PMPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- communicators ---------------------------------------------------- */

typedef struct {
    MPI_Comm handle;
    uint32_t id;
} CommEntry;
static CommEntry *comms;
static size_t ncomms, capcomms;

/* Definitions this rank owns (it is rank 0 of those communicators):
 * [id, size, world ranks...] one after the other. */
static uint32_t *owned;
static size_t nowned, capowned;

static void push_owned(uint32_t v) {
    if (nowned == capowned) {
        capowned = capowned ? 2 * capowned : 256;
        owned = realloc(owned, capowned * sizeof *owned);
        if (!owned) fail("out of memory");
    }
    owned[nowned++] = v;
}

static uint32_t comm_id(MPI_Comm c) {
    if (c == MPI_COMM_WORLD) return 0;
    /* Each rank's MPI_COMM_SELF: its world rank and number 65,535 (a rank's
     * own communicators are numbered from 1 to 65,534). */
    if (c == MPI_COMM_SELF) return ((uint32_t)world_rank << 16) | 0xffff;
    for (size_t i = 0; i < ncomms; i++)
        if (comms[i].handle == c) return comms[i].id;
    return OTF2_UNDEFINED_COMM;
}

/* A communicator just made (collectively by its members): its id from its
 * rank 0, and that rank keeps its definition. */
static void comm_made(MPI_Comm c) {
    if (c == MPI_COMM_NULL) return;
    int flag = 0;
    PMPI_Comm_test_inter(c, &flag);
    if (flag) return; /* inter-communicators stay undefined: refused */
    int rank, size;
    PMPI_Comm_rank(c, &rank);
    PMPI_Comm_size(c, &size);
    uint32_t id = 0;
    if (rank == 0) {
        if (world_rank >= 65536 || comms_made >= 65534)
            fail("more ranks (65,536) or communicators made by one rank over the run (65,534) than the trace numbers");
        id = ((uint32_t)world_rank << 16) | ++comms_made;
    }
    PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, c);
    if (ncomms == capcomms) {
        capcomms = capcomms ? 2 * capcomms : 64;
        comms = realloc(comms, capcomms * sizeof *comms);
        if (!comms) fail("out of memory");
    }
    comms[ncomms++] = (CommEntry){ c, id };
    if (rank == 0) {
        MPI_Group g, wg;
        PMPI_Comm_group(c, &g);
        PMPI_Comm_group(MPI_COMM_WORLD, &wg);
        int *local = malloc(size * sizeof *local), *world = malloc(size * sizeof *world);
        if (!local || !world) fail("out of memory");
        for (int i = 0; i < size; i++) local[i] = i;
        PMPI_Group_translate_ranks(g, size, local, wg, world);
        push_owned(id);
        push_owned((uint32_t)size);
        for (int i = 0; i < size; i++) push_owned((uint32_t)world[i]);
        free(local);
        free(world);
        PMPI_Group_free(&g);
        PMPI_Group_free(&wg);
    }
}

static void comm_freed(MPI_Comm c) {
    for (size_t i = 0; i < ncomms; i++)
        if (comms[i].handle == c) {
            comms[i] = comms[--ncomms];
            return;
        }
}

/* Bytes a completed receive got (MPI_Get_elements_x: counts past 2 GiB). */
static uint64_t received_bytes(MPI_Status *st) {
    MPI_Count n = 0;
    PMPI_Get_elements_x(st, MPI_BYTE, &n);
    return n == MPI_UNDEFINED || n < 0 ? 0 : (uint64_t)n;
}

/* ---- requests --------------------------------------------------------- */

typedef struct {
    MPI_Request handle;
    uint64_t id;
    uint32_t comm;
    int is_recv;
} RequestEntry;
static RequestEntry *requests;
static size_t nrequests, caprequests;
static uint64_t next_request;

static void request_posted(MPI_Request r, uint32_t comm, int is_recv) {
    if (nrequests == caprequests) {
        caprequests = caprequests ? 2 * caprequests : 256;
        requests = realloc(requests, caprequests * sizeof *requests);
        if (!requests) fail("out of memory");
    }
    requests[nrequests++] = (RequestEntry){ r, next_request, comm, is_recv };
}

/* The completion record of request `r` (as it was before the wait or test
 * set it to MPI_REQUEST_NULL), completed with status `st`. */
static void request_done(MPI_Request r, MPI_Status *st, uint64_t t) {
    for (size_t i = 0; i < nrequests; i++) {
        if (requests[i].handle != r) continue;
        RequestEntry e = requests[i];
        requests[i] = requests[--nrequests];
        int cancelled = 0;
        PMPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            OTF2_EvtWriter_MpiRequestCancelled(evt, NULL, t, e.id);
            events++;
            return;
        }
        if (e.is_recv) {
            if (st->MPI_SOURCE != MPI_PROC_NULL) {
                OTF2_EvtWriter_MpiIrecv(evt, NULL, t, (uint32_t)st->MPI_SOURCE, e.comm, (uint32_t)st->MPI_TAG, received_bytes(st), e.id);
                events++;
            }
        } else {
            OTF2_EvtWriter_MpiIsendComplete(evt, NULL, t, e.id);
            events++;
        }
        return;
    }
}

/* ---- records ---------------------------------------------------------- */

static void enter(enum region r, uint64_t t) {
    if (recording_on && !on_main_thread()) __atomic_fetch_add(&other_thread_calls, 1, __ATOMIC_RELAXED);
    if (!recording) return;
    if (t < first_time) first_time = t;
    OTF2_EvtWriter_Enter(evt, NULL, t, r);
    events++;
}
static void leave(enum region r) {
    if (!recording) return;
    OTF2_EvtWriter_Leave(evt, NULL, now(), r);
    events++;
}

static uint64_t type_bytes(MPI_Datatype t, long count) {
    int sz = 0;
    if (t != MPI_DATATYPE_NULL) PMPI_Type_size(t, &sz);
    return (uint64_t)sz * (uint64_t)(count < 0 ? 0 : count);
}

static int comm_size(MPI_Comm c) {
    int n = 1;
    PMPI_Comm_size(c, &n);
    return n;
}
static int comm_rank(MPI_Comm c) {
    int n = 0;
    PMPI_Comm_rank(c, &n);
    return n;
}

static void p2p_send(int dest, MPI_Comm c, int tag, uint64_t bytes, uint64_t t) {
    if (!recording || dest == MPI_PROC_NULL) return;
    OTF2_EvtWriter_MpiSend(evt, NULL, t, (uint32_t)dest, comm_id(c), (uint32_t)tag, bytes);
    events++;
}
static void p2p_recv(MPI_Status *st, MPI_Comm c, uint64_t t) {
    if (!recording || st->MPI_SOURCE == MPI_PROC_NULL) return;
    OTF2_EvtWriter_MpiRecv(evt, NULL, t, (uint32_t)st->MPI_SOURCE, comm_id(c), (uint32_t)st->MPI_TAG, received_bytes(st));
    events++;
}
static void coll_begin(void) {
    if (!recording) return;
    OTF2_EvtWriter_MpiCollectiveBegin(evt, NULL, now());
    events++;
}
static void coll_end(OTF2_CollectiveOp op, MPI_Comm c, int root, uint64_t sent, uint64_t received) {
    if (!recording) return;
    OTF2_EvtWriter_MpiCollectiveEnd(evt, NULL, now(), op, comm_id(c), root < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)root, sent, received);
    events++;
}

/* ---- set-up and finish ------------------------------------------------ */

static const char *trace_dir(void);

static void start_recording(uint64_t t0) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    const char *dir = trace_dir();
    archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) fail("cannot create the OTF2 archive (does TOFUSIM_TRACE_DIR exist already?)");
    OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, NULL);
    OTF2_MPI_Archive_SetCollectiveCallbacks(archive, MPI_COMM_WORLD, MPI_COMM_NULL);
    OTF2_Archive_SetCreator(archive, "tofusim tracer");
    OTF2_Archive_OpenEvtFiles(archive);
    evt = OTF2_Archive_GetEvtWriter(archive, (OTF2_LocationRef)world_rank);
    if (!evt) fail("cannot open the event writer");
    main_thread = pthread_self();
    recording_on = 1;
    first_time = t0;
}

enum { STR_EMPTY, STR_MACHINE, STR_NODE, STR_WORLD, STR_FIRST_REGION };

static void write_definitions(uint64_t *counts, uint32_t *defs, int ndefs, uint64_t start, uint64_t end) {
    OTF2_GlobalDefWriter *w = OTF2_Archive_GetGlobalDefWriter(archive);
    OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000u, start, end - start, OTF2_UNDEFINED_TIMESTAMP);
    uint32_t s = 0;
    OTF2_GlobalDefWriter_WriteString(w, s++, "");
    OTF2_GlobalDefWriter_WriteString(w, s++, "machine");
    OTF2_GlobalDefWriter_WriteString(w, s++, "node");
    OTF2_GlobalDefWriter_WriteString(w, s++, "MPI_COMM_WORLD");
    for (int r = 0; r < REGION_COUNT; r++) {
        OTF2_GlobalDefWriter_WriteString(w, s, region_names[r]);
        OTF2_GlobalDefWriter_WriteRegion(w, r, s, s, STR_EMPTY, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, STR_EMPTY, 0, 0);
        s++;
    }
    OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, STR_MACHINE, STR_NODE, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    char name[64];
    uint64_t *members = malloc((size_t)world_size * sizeof *members);
    if (!members) fail("out of memory");
    for (int r = 0; r < world_size; r++) {
        snprintf(name, sizeof name, "rank %d", r);
        OTF2_GlobalDefWriter_WriteString(w, s, name);
        OTF2_GlobalDefWriter_WriteLocationGroup(w, r, s, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
        OTF2_GlobalDefWriter_WriteLocation(w, r, s, OTF2_LOCATION_TYPE_CPU_THREAD, counts[r], r);
        members[r] = (uint64_t)r;
        s++;
    }
    /* Group 0: the world's locations (rank i is location i); group 1 the
     * world communicator over them; then one group per communicator. */
    OTF2_GlobalDefWriter_WriteGroup(w, 0, STR_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, world_size, members);
    OTF2_GlobalDefWriter_WriteGroup(w, 1, STR_WORLD, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, world_size, members);
    OTF2_GlobalDefWriter_WriteComm(w, 0, STR_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    uint32_t group = 2;
    for (int i = 0; i < ndefs;) {
        uint32_t id = defs[i], size = defs[i + 1];
        for (uint32_t k = 0; k < size; k++) members[k] = defs[i + 2 + k];
        snprintf(name, sizeof name, "communicator %u (rank %u's number %u)", group - 1, id >> 16, id & 0xffff);
        OTF2_GlobalDefWriter_WriteString(w, s, name);
        OTF2_GlobalDefWriter_WriteGroup(w, group, s, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, size, members);
        /* Global ids are dense (1, 2, ...); each rank's mapping table
         * turns the ids in its events into these. */
        OTF2_GlobalDefWriter_WriteComm(w, group - 1, s, group, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
        s++;
        group++;
        i += 2 + (int)size;
    }
    free(members);
    OTF2_Archive_CloseGlobalDefWriter(archive, w);
}

/* The calibration of the model of this machine (TOFUSIM_TRACE_CALIBRATE
 * set): after the program, on its own processes (so with their placement
 * on the cores), ranks 0 and 1 time ping-pongs of 8 B to 4 MiB, best of 3
 * trials; rank 0 writes the half round-trip times to calibration.json in
 * the trace's directory. Not recorded in the trace. */
static void calibrate(const char *dir) {
    const char *want = getenv("TOFUSIM_TRACE_CALIBRATE");
    if (!want || !*want || world_size < 2) return;
    static const int sizes[] = { 8, 1024, 65536, 1 << 20, 4 << 20 };
    static const int reps[] = { 4000, 2000, 400, 40, 20 };
    const int n = sizeof sizes / sizeof sizes[0];
    double best[sizeof sizes / sizeof sizes[0]];
    MPI_Comm c;
    PMPI_Comm_dup(MPI_COMM_WORLD, &c);
    char *buf = world_rank < 2 ? malloc(4 << 20) : NULL;
    if (world_rank < 2 && !buf) fail("out of memory");
    if (buf) memset(buf, 1, 4 << 20);
    for (int k = 0; k < n; k++) {
        best[k] = 1e30;
        for (int trial = 0; trial < 3; trial++) {
            PMPI_Barrier(c);
            double t0 = PMPI_Wtime();
            for (int r = 0; r < reps[k] && world_rank < 2; r++) {
                if (world_rank == 0) {
                    PMPI_Send(buf, sizes[k], MPI_BYTE, 1, 0, c);
                    PMPI_Recv(buf, sizes[k], MPI_BYTE, 1, 0, c, MPI_STATUS_IGNORE);
                } else {
                    PMPI_Recv(buf, sizes[k], MPI_BYTE, 0, 0, c, MPI_STATUS_IGNORE);
                    PMPI_Send(buf, sizes[k], MPI_BYTE, 0, 0, c);
                }
            }
            double t = (PMPI_Wtime() - t0) / (2.0 * reps[k]);
            if (t < best[k]) best[k] = t;
        }
    }
    /* Bandwidth without the turnaround: a stream of 4 MiB messages one way
     * (then an acknowledgement), and exchanges both ways at once. */
    const int big = 4 << 20, count = 16;
    double stream = 1e30, exchange = 1e30;
    char *other = world_rank < 2 ? malloc(big) : NULL;
    if (world_rank < 2 && !other) fail("out of memory");
    if (other) memset(other, 2, big);
    for (int trial = 0; trial < 3; trial++) {
        PMPI_Barrier(c);
        double t0 = PMPI_Wtime();
        if (world_rank == 0) {
            for (int r = 0; r < count; r++) PMPI_Send(buf, big, MPI_BYTE, 1, 1, c);
            PMPI_Recv(buf, 1, MPI_BYTE, 1, 2, c, MPI_STATUS_IGNORE);
        } else if (world_rank == 1) {
            for (int r = 0; r < count; r++) PMPI_Recv(buf, big, MPI_BYTE, 0, 1, c, MPI_STATUS_IGNORE);
            PMPI_Send(buf, 1, MPI_BYTE, 0, 2, c);
        }
        double t = (PMPI_Wtime() - t0) / count;
        if (t < stream) stream = t;
        PMPI_Barrier(c);
        t0 = PMPI_Wtime();
        if (world_rank < 2)
            for (int r = 0; r < count; r++)
                PMPI_Sendrecv(buf, big, MPI_BYTE, 1 - world_rank, 3, other, big, MPI_BYTE, 1 - world_rank, 3, c, MPI_STATUS_IGNORE);
        t = (PMPI_Wtime() - t0) / count;
        if (t < exchange) exchange = t;
    }
    free(other);
    free(buf);
    PMPI_Comm_free(&c);
    if (world_rank != 0) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) fail("cannot write calibration.json in the trace directory");
    fprintf(f, "{\"half_round_trip_s\": {");
    for (int k = 0; k < n; k++) fprintf(f, "%s\"%d\": %.9e", k ? ", " : "", sizes[k], best[k]);
    fprintf(f, "}, \"stream_4MiB_s\": %.9e, \"exchange_4MiB_s\": %.9e, \"ranks\": [0, 1], \"world_size\": %d}\n", stream, exchange, world_size);
    fclose(f);
}

/* Rank 0 writes every rank's count of calls from other threads to
 * threads.json in the trace's directory. */
static void threads_report(const char *dir) {
    uint64_t mine = __atomic_load_n(&other_thread_calls, __ATOMIC_RELAXED);
    uint64_t *all = world_rank == 0 ? malloc((size_t)world_size * sizeof *all) : NULL;
    PMPI_Gather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (world_rank != 0) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/threads.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) fail("cannot write threads.json in the trace directory");
    fprintf(f, "{\"other_thread_calls\": [");
    for (int r = 0; r < world_size; r++) fprintf(f, "%s%llu", r ? ", " : "", (unsigned long long)all[r]);
    fprintf(f, "]}\n");
    fclose(f);
    free(all);
}

static const char *trace_dir(void) {
    const char *dir = getenv("TOFUSIM_TRACE_DIR");
    return dir && *dir ? dir : "tofusim-trace";
}

static void finish_recording(uint64_t t_enter) {
    enter(R_MPI_Finalize, t_enter);
    leave(R_MPI_Finalize);
    recording_on = 0;
    calibrate(trace_dir());
    threads_report(trace_dir());
    uint64_t end = now();
    OTF2_Archive_CloseEvtWriter(archive, evt);
    OTF2_Archive_CloseEvtFiles(archive);
    /* Every rank's event count, first timestamp, end, and communicator
     * definitions, to rank 0. */
    uint64_t mine[3] = { events, first_time, end };
    uint64_t *all = world_rank == 0 ? malloc(3 * (size_t)world_size * sizeof *all) : NULL;
    PMPI_Gather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    int n = (int)nowned;
    int *lens = world_rank == 0 ? malloc((size_t)world_size * sizeof *lens) : NULL;
    PMPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int *displs = NULL, total = 0;
    uint32_t *defs = NULL;
    if (world_rank == 0) {
        displs = malloc((size_t)world_size * sizeof *displs);
        for (int r = 0; r < world_size; r++) {
            displs[r] = total;
            total += lens[r];
        }
        defs = malloc(((size_t)total + 1) * sizeof *defs);
    }
    PMPI_Gatherv(owned, n, MPI_UINT32_T, defs, lens, displs, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    /* The communicators' ids in the events (rank, number) become 1, 2, ...
     * in the order rank 0 gathered them: every rank gets the list and
     * writes it as its mapping table. */
    uint32_t count = 0;
    uint32_t *ids = NULL;
    if (world_rank == 0) {
        /* Every rank's MPI_COMM_SELF: [id, 1, rank]. */
        defs = realloc(defs, ((size_t)total + 3 * (size_t)world_size + 1) * sizeof *defs);
        if (!defs) fail("out of memory");
        for (int r = 0; r < world_size; r++) {
            defs[total++] = ((uint32_t)r << 16) | 0xffff;
            defs[total++] = 1;
            defs[total++] = (uint32_t)r;
        }
        ids = malloc(((size_t)total + 1) * sizeof *ids);
        for (int i = 0; i < total; i += 2 + (int)defs[i + 1]) ids[count++] = defs[i];
    }
    PMPI_Bcast(&count, 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    if (world_rank != 0) ids = malloc(((size_t)count + 1) * sizeof *ids);
    PMPI_Bcast(ids, (int)count, MPI_UINT32_T, 0, MPI_COMM_WORLD);
    OTF2_Archive_OpenDefFiles(archive);
    OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, (OTF2_LocationRef)world_rank);
    if (count > 0) {
        OTF2_IdMap *map = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, count);
        for (uint32_t k = 0; k < count; k++) OTF2_IdMap_AddIdPair(map, ids[k], k + 1);
        OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_COMM, map);
        OTF2_IdMap_Free(map);
    }
    free(ids);
    OTF2_Archive_CloseDefWriter(archive, dw);
    OTF2_Archive_CloseDefFiles(archive);
    if (world_rank == 0) {
        uint64_t *counts = malloc((size_t)world_size * sizeof *counts);
        uint64_t start = UINT64_MAX, stop = 0;
        for (int r = 0; r < world_size; r++) {
            counts[r] = all[3 * r];
            if (all[3 * r + 1] < start) start = all[3 * r + 1];
            if (all[3 * r + 2] > stop) stop = all[3 * r + 2];
        }
        write_definitions(counts, defs, total, start, stop);
        free(counts);
        free(all);
        free(lens);
        free(displs);
        free(defs);
    }
    OTF2_Archive_Close(archive);
}

/* ---- the wrappers ----------------------------------------------------- */

int MPI_Init(int *argc, char ***argv) {
    uint64_t t = now();
    int rc = PMPI_Init(argc, argv);
    start_recording(t);
    enter(R_MPI_Init, t);
    leave(R_MPI_Init);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    uint64_t t = now();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    start_recording(t);
    enter(R_MPI_Init_thread, t);
    leave(R_MPI_Init_thread);
    return rc;
}

int MPI_Finalize(void) {
    finish_recording(now());
    return PMPI_Finalize();
}

#define BLOCKING_SEND(NAME)                                                                  \
    int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) { \
        uint64_t t = now();                                                                  \
        enter(R_##NAME, t);                                                                  \
        p2p_send(dest, comm, tag, type_bytes(dt, count), t);                                 \
        int rc = P##NAME(buf, count, dt, dest, tag, comm);                                   \
        leave(R_##NAME);                                                                     \
        return rc;                                                                           \
    }
BLOCKING_SEND(MPI_Send)
BLOCKING_SEND(MPI_Ssend)
BLOCKING_SEND(MPI_Bsend)
BLOCKING_SEND(MPI_Rsend)

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    enter(R_MPI_Recv, now());
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Recv(buf, count, dt, source, tag, comm, st);
    p2p_recv(st, comm, now());
    leave(R_MPI_Recv);
    return rc;
}

#define NONBLOCKING_SEND(NAME)                                                                                    \
    int NAME(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req) {   \
        uint64_t t = now();                                                                                       \
        enter(R_##NAME, t);                                                                                       \
        int rc = P##NAME(buf, count, dt, dest, tag, comm, req);                                                   \
        if (recording && dest != MPI_PROC_NULL) {                                                                 \
            next_request++;                                                                                       \
            OTF2_EvtWriter_MpiIsend(evt, NULL, t, (uint32_t)dest, comm_id(comm), (uint32_t)tag, type_bytes(dt, count), next_request); \
            events++;                                                                                             \
            request_posted(*req, comm_id(comm), 0);                                                               \
        }                                                                                                         \
        leave(R_##NAME);                                                                                          \
        return rc;                                                                                                \
    }
NONBLOCKING_SEND(MPI_Isend)
NONBLOCKING_SEND(MPI_Issend)
NONBLOCKING_SEND(MPI_Ibsend)
NONBLOCKING_SEND(MPI_Irsend)

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req) {
    uint64_t t = now();
    enter(R_MPI_Irecv, t);
    int rc = PMPI_Irecv(buf, count, dt, source, tag, comm, req);
    if (recording && source != MPI_PROC_NULL) {
        next_request++;
        OTF2_EvtWriter_MpiIrecvRequest(evt, NULL, t, next_request);
        events++;
        request_posted(*req, comm_id(comm), 1);
    }
    leave(R_MPI_Irecv);
    return rc;
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount, MPI_Datatype rdt,
                 int source, int rtag, MPI_Comm comm, MPI_Status *status) {
    uint64_t t = now();
    enter(R_MPI_Sendrecv, t);
    p2p_send(dest, comm, stag, type_bytes(sdt, scount), t);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, source, rtag, comm, st);
    p2p_recv(st, comm, now());
    leave(R_MPI_Sendrecv);
    return rc;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag, MPI_Comm comm,
                         MPI_Status *status) {
    uint64_t t = now();
    enter(R_MPI_Sendrecv_replace, t);
    p2p_send(dest, comm, stag, type_bytes(dt, count), t);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Sendrecv_replace(buf, count, dt, dest, stag, source, rtag, comm, st);
    p2p_recv(st, comm, now());
    leave(R_MPI_Sendrecv_replace);
    return rc;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
    enter(R_MPI_Wait, now());
    MPI_Request before = *req;
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Wait(req, st);
    if (recording && before != MPI_REQUEST_NULL) request_done(before, st, now());
    leave(R_MPI_Wait);
    return rc;
}

/* Copies of the request handles (waits and tests set completed ones to
 * MPI_REQUEST_NULL) and statuses even when the caller ignores them. */
typedef struct {
    MPI_Request *before;
    MPI_Status *statuses;
} Saved;

static Saved save(int n, MPI_Request *reqs, MPI_Status *given) {
    Saved s = { malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Request)), given };
    if (!s.before) fail("out of memory");
    memcpy(s.before, reqs, (size_t)(n > 0 ? n : 0) * sizeof(MPI_Request));
    if (given == MPI_STATUSES_IGNORE) {
        s.statuses = malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Status));
        if (!s.statuses) fail("out of memory");
    }
    return s;
}
static void release(Saved *s, MPI_Status *given) {
    free(s->before);
    if (given == MPI_STATUSES_IGNORE) free(s->statuses);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[]) {
    enter(R_MPI_Waitall, now());
    Saved s = save(n, reqs, statuses);
    int rc = PMPI_Waitall(n, reqs, s.statuses);
    uint64_t t = now();
    for (int i = 0; recording && i < n; i++)
        if (s.before[i] != MPI_REQUEST_NULL) request_done(s.before[i], &s.statuses[i], t);
    release(&s, statuses);
    leave(R_MPI_Waitall);
    return rc;
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status) {
    enter(R_MPI_Waitany, now());
    Saved s = save(n, reqs, MPI_STATUSES_IGNORE);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Waitany(n, reqs, index, st);
    if (recording && *index != MPI_UNDEFINED) request_done(s.before[*index], st, now());
    release(&s, MPI_STATUSES_IGNORE);
    leave(R_MPI_Waitany);
    return rc;
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    enter(R_MPI_Waitsome, now());
    Saved s = save(n, reqs, statuses);
    int rc = PMPI_Waitsome(n, reqs, outcount, indices, s.statuses);
    uint64_t t = now();
    for (int k = 0; recording && *outcount != MPI_UNDEFINED && k < *outcount; k++)
        request_done(s.before[indices[k]], &s.statuses[k], t);
    release(&s, statuses);
    leave(R_MPI_Waitsome);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
    enter(R_MPI_Test, now());
    MPI_Request before = *req;
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Test(req, flag, st);
    if (recording && *flag && before != MPI_REQUEST_NULL) request_done(before, st, now());
    leave(R_MPI_Test);
    return rc;
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]) {
    enter(R_MPI_Testall, now());
    Saved s = save(n, reqs, statuses);
    int rc = PMPI_Testall(n, reqs, flag, s.statuses);
    uint64_t t = now();
    for (int i = 0; recording && *flag && i < n; i++)
        if (s.before[i] != MPI_REQUEST_NULL) request_done(s.before[i], &s.statuses[i], t);
    release(&s, statuses);
    leave(R_MPI_Testall);
    return rc;
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status) {
    enter(R_MPI_Testany, now());
    Saved s = save(n, reqs, MPI_STATUSES_IGNORE);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = PMPI_Testany(n, reqs, index, flag, st);
    if (recording && *flag && *index != MPI_UNDEFINED) request_done(s.before[*index], st, now());
    release(&s, MPI_STATUSES_IGNORE);
    leave(R_MPI_Testany);
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]) {
    enter(R_MPI_Testsome, now());
    Saved s = save(n, reqs, statuses);
    int rc = PMPI_Testsome(n, reqs, outcount, indices, s.statuses);
    uint64_t t = now();
    for (int k = 0; recording && *outcount != MPI_UNDEFINED && k < *outcount; k++)
        request_done(s.before[indices[k]], &s.statuses[k], t);
    release(&s, statuses);
    leave(R_MPI_Testsome);
    return rc;
}

/* Collectives: Enter, MpiCollectiveBegin, the call, MpiCollectiveEnd, Leave. */
#define COLLECTIVE(REGION, CALL, OP, COMM, ROOT, SENT, RECEIVED) \
    do {                                                         \
        enter(REGION, now());                                    \
        coll_begin();                                            \
        int rc_ = CALL;                                          \
        coll_end(OP, COMM, ROOT, SENT, RECEIVED);                \
        leave(REGION);                                           \
        return rc_;                                              \
    } while (0)

int MPI_Barrier(MPI_Comm comm) {
    COLLECTIVE(R_MPI_Barrier, PMPI_Barrier(comm), OTF2_COLLECTIVE_OP_BARRIER, comm, -1, 0, 0);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
    int me = comm_rank(comm);
    uint64_t b = type_bytes(dt, count);
    COLLECTIVE(R_MPI_Bcast, PMPI_Bcast(buf, count, dt, root, comm), OTF2_COLLECTIVE_OP_BCAST, comm, root, me == root ? b : 0, me == root ? 0 : b);
}

int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
    int me = comm_rank(comm);
    uint64_t b = type_bytes(dt, count);
    COLLECTIVE(R_MPI_Reduce, PMPI_Reduce(s, r, count, dt, op, root, comm), OTF2_COLLECTIVE_OP_REDUCE, comm, root, b, me == root ? b : 0);
}

int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    uint64_t b = type_bytes(dt, count);
    COLLECTIVE(R_MPI_Allreduce, PMPI_Allreduce(s, r, count, dt, op, comm), OTF2_COLLECTIVE_OP_ALLREDUCE, comm, -1, b, b);
}

int MPI_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    uint64_t b = type_bytes(dt, count);
    COLLECTIVE(R_MPI_Scan, PMPI_Scan(s, r, count, dt, op, comm), OTF2_COLLECTIVE_OP_SCAN, comm, -1, b, b);
}

int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    uint64_t b = type_bytes(dt, count);
    COLLECTIVE(R_MPI_Exscan, PMPI_Exscan(s, r, count, dt, op, comm), OTF2_COLLECTIVE_OP_EXSCAN, comm, -1, b, b);
}

int MPI_Gather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    uint64_t sent = s == MPI_IN_PLACE ? type_bytes(rdt, rc) : type_bytes(sdt, sc);
    COLLECTIVE(R_MPI_Gather, PMPI_Gather(s, sc, sdt, r, rc, rdt, root, comm), OTF2_COLLECTIVE_OP_GATHER, comm, root, sent,
               me == root ? type_bytes(rdt, (long)rc * n) : 0);
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt, int root,
                MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    long total = 0;
    if (me == root)
        for (int i = 0; i < n; i++) total += rcs[i];
    /* The receive arguments matter at the root only. */
    uint64_t sent = s == MPI_IN_PLACE ? (me == root ? type_bytes(rdt, rcs[me]) : 0) : type_bytes(sdt, sc);
    COLLECTIVE(R_MPI_Gatherv, PMPI_Gatherv(s, sc, sdt, r, rcs, displs, rdt, root, comm), OTF2_COLLECTIVE_OP_GATHERV, comm, root, sent,
               me == root ? type_bytes(rdt, total) : 0);
}

int MPI_Scatter(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    uint64_t received = r == MPI_IN_PLACE ? type_bytes(sdt, sc) : type_bytes(rdt, rc);
    COLLECTIVE(R_MPI_Scatter, PMPI_Scatter(s, sc, sdt, r, rc, rdt, root, comm), OTF2_COLLECTIVE_OP_SCATTER, comm, root,
               me == root ? type_bytes(sdt, (long)sc * n) : 0, received);
}

int MPI_Scatterv(const void *s, const int scs[], const int displs[], MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, int root,
                 MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    long total = 0;
    if (me == root)
        for (int i = 0; i < n; i++) total += scs[i];
    /* The send arguments matter at the root only. */
    uint64_t received = r == MPI_IN_PLACE ? (me == root ? type_bytes(sdt, scs[me]) : 0) : type_bytes(rdt, rc);
    COLLECTIVE(R_MPI_Scatterv, PMPI_Scatterv(s, scs, displs, sdt, r, rc, rdt, root, comm), OTF2_COLLECTIVE_OP_SCATTERV, comm, root,
               me == root ? type_bytes(sdt, total) : 0, received);
}

int MPI_Allgather(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm) {
    int n = comm_size(comm);
    uint64_t sent = s == MPI_IN_PLACE ? type_bytes(rdt, rc) : type_bytes(sdt, sc);
    COLLECTIVE(R_MPI_Allgather, PMPI_Allgather(s, sc, sdt, r, rc, rdt, comm), OTF2_COLLECTIVE_OP_ALLGATHER, comm, -1, sent,
               type_bytes(rdt, (long)rc * n));
}

int MPI_Allgatherv(const void *s, int sc, MPI_Datatype sdt, void *r, const int rcs[], const int displs[], MPI_Datatype rdt,
                   MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    long total = 0;
    for (int i = 0; i < n; i++) total += rcs[i];
    uint64_t sent = s == MPI_IN_PLACE ? type_bytes(rdt, rcs[me]) : type_bytes(sdt, sc);
    COLLECTIVE(R_MPI_Allgatherv, PMPI_Allgatherv(s, sc, sdt, r, rcs, displs, rdt, comm), OTF2_COLLECTIVE_OP_ALLGATHERV, comm, -1, sent,
               type_bytes(rdt, total));
}

int MPI_Alltoall(const void *s, int sc, MPI_Datatype sdt, void *r, int rc, MPI_Datatype rdt, MPI_Comm comm) {
    int n = comm_size(comm);
    uint64_t sent = s == MPI_IN_PLACE ? type_bytes(rdt, (long)rc * n) : type_bytes(sdt, (long)sc * n);
    COLLECTIVE(R_MPI_Alltoall, PMPI_Alltoall(s, sc, sdt, r, rc, rdt, comm), OTF2_COLLECTIVE_OP_ALLTOALL, comm, -1, sent,
               type_bytes(rdt, (long)rc * n));
}

int MPI_Alltoallv(const void *s, const int scs[], const int sd[], MPI_Datatype sdt, void *r, const int rcs[], const int rd[],
                  MPI_Datatype rdt, MPI_Comm comm) {
    int n = comm_size(comm);
    long st = 0, rt = 0;
    for (int i = 0; i < n; i++) {
        rt += rcs[i];
        if (s != MPI_IN_PLACE) st += scs[i];
    }
    uint64_t sent = s == MPI_IN_PLACE ? type_bytes(rdt, rt) : type_bytes(sdt, st);
    COLLECTIVE(R_MPI_Alltoallv, PMPI_Alltoallv(s, scs, sd, sdt, r, rcs, rd, rdt, comm), OTF2_COLLECTIVE_OP_ALLTOALLV, comm, -1, sent,
               type_bytes(rdt, rt));
}

int MPI_Reduce_scatter(const void *s, void *r, const int rcs[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    int me = comm_rank(comm), n = comm_size(comm);
    long total = 0;
    for (int i = 0; i < n; i++) total += rcs[i];
    COLLECTIVE(R_MPI_Reduce_scatter, PMPI_Reduce_scatter(s, r, rcs, dt, op, comm), OTF2_COLLECTIVE_OP_REDUCE_SCATTER, comm, -1,
               type_bytes(dt, total), type_bytes(dt, rcs[me]));
}

int MPI_Reduce_scatter_block(const void *s, void *r, int rc, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    int n = comm_size(comm);
    COLLECTIVE(R_MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block(s, r, rc, dt, op, comm), OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
               comm, -1, type_bytes(dt, (long)rc * n), type_bytes(dt, rc));
}

/* Communicator constructors: collective over the parent; recorded as a
 * region and as the OTF2 collective CREATE_HANDLE on the parent. */
#define CONSTRUCTOR(REGION, CALL, PARENT, NEWCOMM)                           \
    do {                                                                     \
        enter(REGION, now());                                                \
        coll_begin();                                                        \
        int rc_ = CALL;                                                      \
        if (recording) comm_made(*(NEWCOMM));                                \
        coll_end(OTF2_COLLECTIVE_OP_CREATE_HANDLE, PARENT, -1, 0, 0);         \
        leave(REGION);                                                       \
        return rc_;                                                          \
    } while (0)

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Comm_split, PMPI_Comm_split(comm, color, key, out), comm, out);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Comm_dup, PMPI_Comm_dup(comm, out), comm, out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group g, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Comm_create, PMPI_Comm_create(comm, g, out), comm, out);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Comm_split_type, PMPI_Comm_split_type(comm, type, key, info, out), comm, out);
}
int MPI_Cart_create(MPI_Comm comm, int nd, const int dims[], const int periods[], int reorder, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Cart_create, PMPI_Cart_create(comm, nd, dims, periods, reorder, out), comm, out);
}
int MPI_Cart_sub(MPI_Comm comm, const int remain[], MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Cart_sub, PMPI_Cart_sub(comm, remain, out), comm, out);
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Comm_dup_with_info, PMPI_Comm_dup_with_info(comm, info, out), comm, out);
}
int MPI_Graph_create(MPI_Comm comm, int n, const int index[], const int edges[], int reorder, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Graph_create, PMPI_Graph_create(comm, n, index, edges, reorder, out), comm, out);
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int nodes[], const int degrees[], const int targets[], const int weights[],
                          MPI_Info info, int reorder, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Dist_graph_create, PMPI_Dist_graph_create(comm, n, nodes, degrees, targets, weights, info, reorder, out), comm, out);
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indeg, const int sources[], const int sw[], int outdeg, const int dests[],
                                   const int dw[], MPI_Info info, int reorder, MPI_Comm *out) {
    CONSTRUCTOR(R_MPI_Dist_graph_create_adjacent,
                PMPI_Dist_graph_create_adjacent(comm, indeg, sources, sw, outdeg, dests, dw, info, reorder, out), comm, out);
}

int MPI_Comm_free(MPI_Comm *comm) {
    enter(R_MPI_Comm_free, now());
    MPI_Comm c = *comm;
    int rc = PMPI_Comm_free(comm);
    comm_freed(c);
    leave(R_MPI_Comm_free);
    return rc;
}

/* A freed request leaves the table (its handle may be reused); the call is
 * one the replay refuses. */
int MPI_Request_free(MPI_Request *r) {
    enter(R_MPI_Request_free, now());
    for (size_t i = 0; recording && i < nrequests; i++)
        if (requests[i].handle == *r) {
            requests[i] = requests[--nrequests];
            break;
        }
    int rc = PMPI_Request_free(r);
    leave(R_MPI_Request_free);
    return rc;
}

/* Calls the replay refuses: their region only. */
#define REGION_ONLY(NAME, PARAMS, ARGS)   \
    int NAME PARAMS {                     \
        enter(R_##NAME, now());           \
        int rc_ = P##NAME ARGS;           \
        leave(R_##NAME);                  \
        return rc_;                       \
    }
/* Probes move no message (the receive after one does): their region only. */
REGION_ONLY(MPI_Probe, (int s, int t, MPI_Comm c, MPI_Status *st), (s, t, c, st))
REGION_ONLY(MPI_Iprobe, (int s, int t, MPI_Comm c, int *f, MPI_Status *st), (s, t, c, f, st))
REGION_ONLY(MPI_Send_init, (const void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c, MPI_Request *r), (b, n, d, p, t, c, r))
REGION_ONLY(MPI_Recv_init, (void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c, MPI_Request *r), (b, n, d, p, t, c, r))
REGION_ONLY(MPI_Start, (MPI_Request * r), (r))
REGION_ONLY(MPI_Startall, (int n, MPI_Request r[]), (n, r))
REGION_ONLY(MPI_Cancel, (MPI_Request * r), (r))
REGION_ONLY(MPI_Ibarrier, (MPI_Comm c, MPI_Request *r), (c, r))
REGION_ONLY(MPI_Ibcast, (void *b, int n, MPI_Datatype d, int root, MPI_Comm c, MPI_Request *r), (b, n, d, root, c, r))
REGION_ONLY(MPI_Iallreduce, (const void *s, void *b, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c, MPI_Request *r), (s, b, n, d, o, c, r))
REGION_ONLY(MPI_Ireduce, (const void *s, void *b, int n, MPI_Datatype d, MPI_Op o, int root, MPI_Comm c, MPI_Request *r),
            (s, b, n, d, o, root, c, r))
REGION_ONLY(MPI_Ialltoall, (const void *s, int sc, MPI_Datatype sd, void *b, int rc, MPI_Datatype rd, MPI_Comm c, MPI_Request *r),
            (s, sc, sd, b, rc, rd, c, r))
REGION_ONLY(MPI_Iallgather, (const void *s, int sc, MPI_Datatype sd, void *b, int rc, MPI_Datatype rd, MPI_Comm c, MPI_Request *r),
            (s, sc, sd, b, rc, rd, c, r))
REGION_ONLY(MPI_Alltoallw,
            (const void *s, const int sc[], const int sd[], const MPI_Datatype st[], void *b, const int rc[], const int rd[],
             const MPI_Datatype rt[], MPI_Comm c),
            (s, sc, sd, st, b, rc, rd, rt, c))
REGION_ONLY(MPI_Put, (const void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w),
            (o, oc, ot, tr, td, tc, tt, w))
REGION_ONLY(MPI_Get, (void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w),
            (o, oc, ot, tr, td, tc, tt, w))
REGION_ONLY(MPI_Accumulate, (const void *o, int oc, MPI_Datatype ot, int tr, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w),
            (o, oc, ot, tr, td, tc, tt, op, w))
REGION_ONLY(MPI_Win_fence, (int a, MPI_Win w), (a, w))
REGION_ONLY(MPI_Intercomm_create, (MPI_Comm l, int ll, MPI_Comm p, int rl, int t, MPI_Comm *o), (l, ll, p, rl, t, o))
REGION_ONLY(MPI_Neighbor_alltoall, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c), (s, sc, st, r, rc, rt, c))
REGION_ONLY(MPI_Neighbor_allgather, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c), (s, sc, st, r, rc, rt, c))
REGION_ONLY(MPI_Ialltoallv,
            (const void *s, const int sc[], const int sd[], MPI_Datatype st, void *b, const int rc[], const int rd[], MPI_Datatype rt,
             MPI_Comm c, MPI_Request *q),
            (s, sc, sd, st, b, rc, rd, rt, c, q))
REGION_ONLY(MPI_Iallgatherv,
            (const void *s, int sc, MPI_Datatype st, void *b, const int rc[], const int d[], MPI_Datatype rt, MPI_Comm c, MPI_Request *q),
            (s, sc, st, b, rc, d, rt, c, q))
REGION_ONLY(MPI_Igather, (const void *s, int sc, MPI_Datatype st, void *b, int rc, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *q),
            (s, sc, st, b, rc, rt, root, c, q))
REGION_ONLY(MPI_Iscatter, (const void *s, int sc, MPI_Datatype st, void *b, int rc, MPI_Datatype rt, int root, MPI_Comm c, MPI_Request *q),
            (s, sc, st, b, rc, rt, root, c, q))
REGION_ONLY(MPI_Ireduce_scatter_block, (const void *s, void *b, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c, MPI_Request *q), (s, b, n, d, o, c, q))
REGION_ONLY(MPI_Iscan, (const void *s, void *b, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c, MPI_Request *q), (s, b, n, d, o, c, q))
REGION_ONLY(MPI_Mprobe, (int s, int t, MPI_Comm c, MPI_Message *m, MPI_Status *st), (s, t, c, m, st))
REGION_ONLY(MPI_Improbe, (int s, int t, MPI_Comm c, int *f, MPI_Message *m, MPI_Status *st), (s, t, c, f, m, st))
REGION_ONLY(MPI_Mrecv, (void *b, int n, MPI_Datatype d, MPI_Message *m, MPI_Status *st), (b, n, d, m, st))
REGION_ONLY(MPI_Imrecv, (void *b, int n, MPI_Datatype d, MPI_Message *m, MPI_Request *q), (b, n, d, m, q))
REGION_ONLY(MPI_Bsend_init, (const void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c, MPI_Request *r), (b, n, d, p, t, c, r))
REGION_ONLY(MPI_Ssend_init, (const void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c, MPI_Request *r), (b, n, d, p, t, c, r))
REGION_ONLY(MPI_Rsend_init, (const void *b, int n, MPI_Datatype d, int p, int t, MPI_Comm c, MPI_Request *r), (b, n, d, p, t, c, r))
REGION_ONLY(MPI_Win_create, (void *b, MPI_Aint n, int u, MPI_Info i, MPI_Comm c, MPI_Win *w), (b, n, u, i, c, w))
REGION_ONLY(MPI_Win_allocate, (MPI_Aint n, int u, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w), (n, u, i, c, b, w))
REGION_ONLY(MPI_Win_lock, (int l, int r, int a, MPI_Win w), (l, r, a, w))
REGION_ONLY(MPI_Win_unlock, (int r, MPI_Win w), (r, w))
REGION_ONLY(MPI_Win_lock_all, (int a, MPI_Win w), (a, w))
REGION_ONLY(MPI_Win_unlock_all, (MPI_Win w), (w))
REGION_ONLY(MPI_Win_flush, (int r, MPI_Win w), (r, w))
REGION_ONLY(MPI_Fetch_and_op, (const void *o, void *r, MPI_Datatype d, int t, MPI_Aint td, MPI_Op op, MPI_Win w), (o, r, d, t, td, op, w))
REGION_ONLY(MPI_Compare_and_swap, (const void *o, const void *c, void *r, MPI_Datatype d, int t, MPI_Aint td, MPI_Win w), (o, c, r, d, t, td, w))
REGION_ONLY(MPI_Get_accumulate,
            (const void *o, int oc, MPI_Datatype ot, void *r, int rc, MPI_Datatype rt, int t, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op op,
             MPI_Win w),
            (o, oc, ot, r, rc, rt, t, td, tc, tt, op, w))
REGION_ONLY(MPI_Rput, (const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w, MPI_Request *q),
            (o, oc, ot, t, td, tc, tt, w, q))
REGION_ONLY(MPI_Rget, (void *o, int oc, MPI_Datatype ot, int t, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Win w, MPI_Request *q),
            (o, oc, ot, t, td, tc, tt, w, q))
REGION_ONLY(MPI_Comm_spawn, (const char *cmd, char *argv[], int n, MPI_Info i, int root, MPI_Comm c, MPI_Comm *ic, int errs[]),
            (cmd, argv, n, i, root, c, ic, errs))
REGION_ONLY(MPI_Intercomm_merge, (MPI_Comm ic, int high, MPI_Comm *out), (ic, high, out))
REGION_ONLY(MPI_Comm_create_group, (MPI_Comm c, MPI_Group g, int t, MPI_Comm *out), (c, g, t, out))
REGION_ONLY(MPI_Comm_idup, (MPI_Comm c, MPI_Comm *out, MPI_Request *q), (c, out, q))
/* I/O: not replayed; named so the replay refuses it. */
REGION_ONLY(MPI_File_open, (MPI_Comm c, const char *f, int m, MPI_Info i, MPI_File *fh), (c, f, m, i, fh))
REGION_ONLY(MPI_File_close, (MPI_File * fh), (fh))
REGION_ONLY(MPI_File_read, (MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Status *st), (fh, b, n, d, st))
REGION_ONLY(MPI_File_write, (MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Status *st), (fh, b, n, d, st))
REGION_ONLY(MPI_File_read_all, (MPI_File fh, void *b, int n, MPI_Datatype d, MPI_Status *st), (fh, b, n, d, st))
REGION_ONLY(MPI_File_write_all, (MPI_File fh, const void *b, int n, MPI_Datatype d, MPI_Status *st), (fh, b, n, d, st))
REGION_ONLY(MPI_File_read_at_all, (MPI_File fh, MPI_Offset o, void *b, int n, MPI_Datatype d, MPI_Status *st), (fh, o, b, n, d, st))
REGION_ONLY(MPI_File_write_at_all, (MPI_File fh, MPI_Offset o, const void *b, int n, MPI_Datatype d, MPI_Status *st), (fh, o, b, n, d, st))
REGION_ONLY(MPI_Neighbor_alltoallv,
            (const void *s, const int sc[], const int sd[], MPI_Datatype st, void *r, const int rc[], const int rd[], MPI_Datatype rt,
             MPI_Comm c),
            (s, sc, sd, st, r, rc, rd, rt, c))
REGION_ONLY(MPI_Neighbor_allgatherv,
            (const void *s, int sc, MPI_Datatype st, void *r, const int rc[], const int d[], MPI_Datatype rt, MPI_Comm c),
            (s, sc, st, r, rc, d, rt, c))
REGION_ONLY(MPI_Neighbor_alltoallw,
            (const void *s, const int sc[], const MPI_Aint sd[], const MPI_Datatype st[], void *r, const int rc[], const MPI_Aint rd[],
             const MPI_Datatype rt[], MPI_Comm c),
            (s, sc, sd, st, r, rc, rd, rt, c))
REGION_ONLY(MPI_Ineighbor_alltoall, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c, MPI_Request *q),
            (s, sc, st, r, rc, rt, c, q))
REGION_ONLY(MPI_Ineighbor_allgather, (const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm c, MPI_Request *q),
            (s, sc, st, r, rc, rt, c, q))
REGION_ONLY(MPI_Ireduce_scatter, (const void *s, void *r, const int rc[], MPI_Datatype d, MPI_Op o, MPI_Comm c, MPI_Request *q),
            (s, r, rc, d, o, c, q))
REGION_ONLY(MPI_Iexscan, (const void *s, void *r, int n, MPI_Datatype d, MPI_Op o, MPI_Comm c, MPI_Request *q), (s, r, n, d, o, c, q))
REGION_ONLY(MPI_Ialltoallw,
            (const void *s, const int sc[], const int sd[], const MPI_Datatype st[], void *r, const int rc[], const int rd[],
             const MPI_Datatype rt[], MPI_Comm c, MPI_Request *q),
            (s, sc, sd, st, r, rc, rd, rt, c, q))
REGION_ONLY(MPI_Win_allocate_shared, (MPI_Aint n, int u, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w), (n, u, i, c, b, w))
REGION_ONLY(MPI_Win_post, (MPI_Group g, int a, MPI_Win w), (g, a, w))
REGION_ONLY(MPI_Win_start, (MPI_Group g, int a, MPI_Win w), (g, a, w))
REGION_ONLY(MPI_Win_complete, (MPI_Win w), (w))
REGION_ONLY(MPI_Win_wait, (MPI_Win w), (w))
REGION_ONLY(MPI_Win_free, (MPI_Win * w), (w))
REGION_ONLY(MPI_Raccumulate,
            (const void *o, int oc, MPI_Datatype ot, int t, MPI_Aint td, int tc, MPI_Datatype tt, MPI_Op op, MPI_Win w, MPI_Request *q),
            (o, oc, ot, t, td, tc, tt, op, w, q))
