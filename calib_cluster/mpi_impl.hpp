#pragma once
// The MPI handle behind MpiComm (private to calib_cluster's MPI sources).
#include <mpi.h>

#include "calib_cluster/mpi_world.hpp"

namespace infraplan::ccal {

struct MpiComm::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
};

}  // namespace infraplan::ccal
