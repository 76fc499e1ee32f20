/* An application that computes in long stretches and polls in between:
 * each message must be found, or received, within a few polls.  Even ranks
 * send the odd rank after them a message of each size below (eager and
 * rendezvous), one at a time; the receiver computes -chunk ms (longer than
 * the liveness agent's rttcc_agent_idle_ms, so the agent is answering for
 * it when the message comes) and polls, until the poll says the message is
 * there, then checks it byte for byte.  -poll iprobe (HPL's look-ahead):
 * MPI_Iprobe, then MPI_Recv; -poll test (overlap): MPI_Irecv first, then
 * MPI_Test: the rendezvous must move the bytes while the receiver computes.
 * Every message must be there within -polls polls. */
#include "mpitest.h"

static size_t sizes[] = {1024, 65536, 1u << 20, 4u << 20};

int main(int argc, char **argv)
{
    double chunk = 0.15;
    int max_polls = 3, test = 0, rank, n;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (0 == strcmp(argv[i], "-chunk")) {
            chunk = atof(argv[i + 1]) / 1e3;
        } else if (0 == strcmp(argv[i], "-polls")) {
            max_polls = atoi(argv[i + 1]);
        } else if (0 == strcmp(argv[i], "-poll")) {
            test = 0 == strcmp(argv[i + 1], "test");
        }
    }
    const int peer = rank ^ 1;
    const int nsizes = (int) (sizeof sizes / sizeof sizes[0]);
    unsigned char *buf = mt_alloc(sizes[nsizes - 1]);
    for (int m = 0; m < nsizes; ++m) {
        const size_t size = sizes[m];
        MPI_Barrier(MPI_COMM_WORLD);
        if (peer >= n) {
            continue;
        }
        if (0 == rank % 2) {
            mt_fill(buf, size, rank, peer, m);
            MPI_Send(buf, (int) size, MPI_BYTE, peer, m, MPI_COMM_WORLD);
            continue;
        }
        MPI_Request req = MPI_REQUEST_NULL;
        int found = 0, polls = 0;
        if (test) {
            MPI_Irecv(buf, (int) size, MPI_BYTE, peer, m, MPI_COMM_WORLD, &req);
        }
        while (!found && polls < 10 * max_polls) {
            mt_compute(chunk);
            ++polls;
            if (test) {
                MPI_Test(&req, &found, MPI_STATUS_IGNORE);
            } else {
                MPI_Iprobe(peer, m, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
            }
        }
        if (!found) {
            mt_fail("poll_progress", "a message of %zu bytes was not there after %zu polls", size, (size_t) polls);
        }
        if (test) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int) size, MPI_BYTE, peer, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        mt_check("poll_progress", buf, size, peer, rank, m);
        if (polls > max_polls) {
            mt_fail("poll_progress", "a message of %zu bytes was there only at poll %zu", size, (size_t) polls);
        }
    }
    free(buf);
    mt_pass("poll_progress");
    MPI_Finalize();
    return 0;
}
