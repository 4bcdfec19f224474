/*
 * The ping-pong `tofusim trace record` runs beside a traced program to
 * calibrate its model of the recording machine (issue 20; docs/traces.md):
 * the half round-trip time of messages of each size between ranks 0 and 1,
 * printed by rank 0 as one JSON object. Not traced itself.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "tofusim_pingpong: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    static const int sizes[] = { 8, 1024, 65536, 1 << 20, 4 << 20 };
    static const int reps[] = { 4000, 2000, 400, 40, 20 };
    const int n = sizeof sizes / sizeof sizes[0];
    char *buf = malloc(4 << 20);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < 4 << 20; i++) buf[i] = (char)i;
    if (rank == 0) printf("{\"half_round_trip_s\": {");
    for (int k = 0; k < n; k++) {
        double best = 1e30;
        for (int trial = 0; trial < 3; trial++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int r = 0; r < reps[k] && rank < 2; r++) {
                if (rank == 0) {
                    MPI_Send(buf, sizes[k], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, sizes[k], MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, sizes[k], MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, sizes[k], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            double t = (MPI_Wtime() - t0) / (2.0 * reps[k]);
            if (t < best) best = t;
        }
        if (rank == 0) printf("%s\"%d\": %.9e", k ? ", " : "", sizes[k], best);
    }
    if (rank == 0) printf("}}\n");
    free(buf);
    MPI_Finalize();
    return 0;
}
