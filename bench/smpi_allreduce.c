#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  long bytes = argc > 1 ? atol(argv[1]) : 8;
  long n = bytes / 8 > 0 ? bytes / 8 : 1;
  double *a = calloc(n, 8), *b = calloc(n, 8);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Allreduce(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double t = MPI_Wtime() - t0;
  if (rank == 0) printf("%ld %.9f\n", bytes, t);
  MPI_Finalize();
  return 0;
}
