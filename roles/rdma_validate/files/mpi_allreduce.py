# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MPI allreduce benchmark of the rdma_validate workload stage (mpi4py + numpy, as users run).

Started by mpirun on every host with ``python3 -c <this file> SIZES ITERATIONS BUDGET``: SIZES a comma list
of message sizes in bytes, ITERATIONS the most timed allreduces per size, BUDGET the seconds a size may take
(slow links, such as Soft-RoCE under emulation, run fewer iterations: at least 3). Every rank checks the
sum; rank 0 prints one line ``RDMA_FABRIC_ALLREDUCE {json}`` with ``ranks`` and one row per size:
``bytes``, ``iterations``, ``time_us`` (slowest rank's mean), ``algbw_gbps`` (bytes / time), ``busbw_gbps``
(algbw * 2 (n - 1) / n, nccl-tests' allreduce bus bandwidth), ``correct``.
"""
import json
import socket
import sys

import numpy
from mpi4py import MPI


def main(argv):
    comm = MPI.COMM_WORLD
    rank, ranks = comm.Get_rank(), comm.Get_size()
    sizes = [int(s) for s in argv[1].split(",")]
    max_iters, budget = int(argv[2]), float(argv[3])
    expected = ranks * (ranks + 1) / 2.0
    rows = []
    for size in sizes:
        count = max(1, size // 4)
        send = numpy.full(count, rank + 1, dtype=numpy.float32)
        recv = numpy.zeros(count, dtype=numpy.float32)
        comm.Barrier()
        start = MPI.Wtime()
        comm.Allreduce(send, recv, op=MPI.SUM)
        first = comm.allreduce(MPI.Wtime() - start, op=MPI.MAX)
        iters = int(max(3, min(max_iters, budget / max(first, 1e-9))))
        comm.Barrier()
        start = MPI.Wtime()
        for dummy in range(iters):
            comm.Allreduce(send, recv, op=MPI.SUM)
        took = comm.allreduce((MPI.Wtime() - start) / iters, op=MPI.MAX)
        correct = comm.allreduce(bool(numpy.all(recv == expected)), op=MPI.LAND)
        nbytes = count * 4
        algbw = nbytes * 8 / took / 1e9
        rows.append({"bytes": nbytes, "iterations": iters, "time_us": round(took * 1e6, 3),
                     "algbw_gbps": round(algbw, 6), "busbw_gbps": round(algbw * 2 * (ranks - 1) / ranks, 6),
                     "correct": bool(correct)})
    hosts = comm.gather(socket.gethostname(), root=0)
    if rank == 0:
        sys.stdout.write("RDMA_FABRIC_ALLREDUCE %s\n" % json.dumps({"ranks": ranks, "hosts": hosts, "rows": rows}))
        sys.stdout.flush()


main(sys.argv)
