/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * All-to-all, as nccl-tests runs it: the size is the whole buffer of a
 * rank, block j of sendbuf (size / n bytes) goes to the rank at position j
 * (of the ring order, within its rail group with --multi-rail) and lands in
 * block p of that rank's recvbuf, p being the sender's position.
 *
 * pairwise: n-1 steps; in step s the rank at position p sends to position
 * p+s and receives from position p-s, so every rank sends to exactly one
 * peer and receives from exactly one in each step (the MPI pairwise-
 * exchange schedule): no incast, and a slow pair holds up one step only.
 * direct: every block at once, as a naive all-to-all does: n-1 flows into
 * every receiver together, the incast MoE dispatch produces.  The first
 * measures the fabric's capacity, the second its behaviour under incast.
 */
#include <stdlib.h>
#include <string.h>

#include "coll.h"

int coll_alltoall(struct coll_comm *c, uint64_t count)
{
	int n = c->gn, p = c->gpos, s, rc = 0;
	uint64_t blk = count * 4;

	/* blocks are in group position order */
	memcpy(c->recvbuf + (uint64_t)p * blk, c->sendbuf + (uint64_t)p * blk, blk);
	if (n < 2 || !count)
		return 0;
	if (c->o->algo == COLL_ALGO_PAIRWISE) {
		for (s = 1; s < n && !rc; s++) {
			int to = (p + s) % n, from = (p - s + n) % n;
			struct coll_xfer snd = { .c = c, .peer = c->gorder[to], .buf = c->sendbuf,
						 .off = (uint64_t)to * blk, .len = blk };
			struct coll_xfer rcv = { .c = c, .peer = c->gorder[from], .buf = c->recvbuf,
						 .off = (uint64_t)from * blk, .len = blk };

			rc = coll_run_xfers(c, &snd, 1, &rcv, 1);
		}
		return rc;
	}
	{
		struct coll_xfer *snd = calloc((size_t)n, sizeof(*snd)), *rcv = calloc((size_t)n, sizeof(*rcv));
		int k = 0;

		for (s = 1; s < n; s++, k++) {
			int to = (p + s) % n, from = (p - s + n) % n;

			snd[k] = (struct coll_xfer){ .c = c, .peer = c->gorder[to], .buf = c->sendbuf,
						     .off = (uint64_t)to * blk, .len = blk };
			rcv[k] = (struct coll_xfer){ .c = c, .peer = c->gorder[from], .buf = c->recvbuf,
						     .off = (uint64_t)from * blk, .len = blk };
		}
		rc = coll_run_xfers(c, snd, k, rcv, k);
		free(snd);
		free(rcv);
	}
	return rc;
}
